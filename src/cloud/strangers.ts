// Whether the built-in cloud runs strangers' code: anyone may sign up (SIGNUP=open) and the
// service is meant to be reached from elsewhere (PUBLIC_URL is not this machine). Then its agent
// never falls back to the process runtime by itself (src/runner/runtimes/choose.ts): a developer
// trying Frameplane on a laptop gets local processes, an operator who forgot Docker on a public
// server gets refused deployments that say why, not tenants' code beside the service. Pure.
import ipaddr from 'ipaddr.js';

/** True for a URL of this machine only: localhost, *.localhost, 127.0.0.0/8, ::1. */
export function isLocalUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  } catch {
    return false;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return ipaddr.isValid(host) && ipaddr.process(host).range() === 'loopback';
}

export const runsStrangersCode = (c: { signup: 'open' | 'closed'; publicUrl: string }) =>
  c.signup === 'open' && !isLocalUrl(c.publicUrl);
