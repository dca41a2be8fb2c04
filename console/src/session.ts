// The signed-in user's token. The API takes bearer tokens only, so the token is kept in
// localStorage and sent by the SDK; the strict CSP (no inline or foreign script) is the defence
// against a script that would read it. A tab that comes from the invitation page brings that
// page's session (sessionStorage), so accepting and then opening the console needs no new login.
import { useSyncExternalStore } from 'react';

const KEY = 'frameplane.token';
const INVITATION_PAGE_KEY = 'frameplane.session';
const listeners = new Set<() => void>();

function adopt(): string | null {
  try {
    const s = JSON.parse(sessionStorage.getItem(INVITATION_PAGE_KEY) ?? 'null');
    if (s && typeof s.access_token === 'string') {
      sessionStorage.removeItem(INVITATION_PAGE_KEY);
      localStorage.setItem(KEY, s.access_token);
      return s.access_token;
    }
  } catch {
    // An unreadable leftover is no session.
  }
  return null;
}

export const getToken = (): string | null => localStorage.getItem(KEY) ?? adopt();

export function setToken(token: string | null) {
  if (token) localStorage.setItem(KEY, token);
  else localStorage.removeItem(KEY);
  for (const fn of listeners) fn();
}

function subscribe(fn: () => void) {
  listeners.add(fn);
  // Signing out in another tab signs this one out too.
  window.addEventListener('storage', fn);
  return () => {
    listeners.delete(fn);
    window.removeEventListener('storage', fn);
  };
}

export const useToken = () => useSyncExternalStore(subscribe, getToken);
