// Where the CLI keeps the login: $XDG_CONFIG_HOME/frameplane/config.json (~/.config when unset),
// readable by the user alone (0600 in a 0700 directory), written whole or not at all.
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export interface StoredLogin {
  server: string;
  token: string;
  /** `session`: made by `login` with a password, ended by `logout`; `token`: given by the user. */
  kind: 'session' | 'token';
  email?: string;
}

export function configPath(env = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'frameplane', 'config.json');
}

export function readLogin(): StoredLogin | undefined {
  try {
    const value = JSON.parse(readFileSync(configPath(), 'utf8'));
    return typeof value?.token === 'string' && typeof value?.server === 'string'
      ? value
      : undefined;
  } catch {
    return undefined;
  }
}

export function writeLogin(login: StoredLogin) {
  const file = configPath();
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temp, 0o600); // mode above is masked by the umask, and ignored for an existing file
  renameSync(temp, file);
}

export function forgetLogin() {
  rmSync(configPath(), { force: true });
}
