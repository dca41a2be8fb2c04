// DATA_DIR/secret.key (src/secret-key.ts): generated once, and trusted only as generated. Issue 34,
// item 2: root wrote a commit SHA into it through a tenant's symlink, and after a restart the
// attacker could sign a token for any user; a file that is not exactly what Frameplane writes
// (a private regular file of the service's uid holding 43 base64url characters) stops the start.
import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { isGeneratedKey, secretKey } from '../src/secret-key.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dataDir() {
  const d = mkdtempSync(join(tmpdir(), 'frameplane-key-'));
  dirs.push(d);
  return d;
}

const generatedKey = () => randomBytes(32).toString('base64url');
const uid = process.getuid?.() ?? 0;

/** DATA_DIR with secret.key holding `content` at `mode`. */
function withKey(content: string, mode = 0o600) {
  const dir = dataDir();
  const file = join(dir, 'secret.key');
  writeFileSync(file, content, { mode });
  chmodSync(file, mode);
  return { dir, file };
}

const load = (dir: string, o: { secretKey?: string; uid?: number } = {}) =>
  secretKey({ secretKey: o.secretKey, dataDir: dir, uid: o.uid });

describe('the generated secret key', () => {
  it('is made once, 32 random bytes in base64url, in a 0600 file, and read back after', () => {
    const dir = join(dataDir(), 'data');
    const generated: string[] = [];
    const key = secretKey({
      secretKey: undefined,
      dataDir: dir,
      generated: (f) => generated.push(f),
    });
    const file = join(dir, 'secret.key');
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(key, 'base64url')).toHaveLength(32);
    expect(readFileSync(file, 'utf8')).toBe(key);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(generated).toEqual([file]);
    expect(
      secretKey({ secretKey: undefined, dataDir: dir, generated: (f) => generated.push(f) }),
    ).toBe(key);
    expect(generated).toHaveLength(1);
  });

  it('is read with a trailing newline, as an editor leaves it', () => {
    const key = generatedKey();
    expect(load(withKey(`${key}\n`).dir)).toBe(key);
  });

  it('SECRET_KEY is used as it is, the file not even looked at', () => {
    const { dir } = withKey('not a key', 0o644);
    expect(load(dir, { secretKey: 'any key the operator chose' })).toBe(
      'any key the operator chose',
    );
  });

  it.each([
    ['a generated key', generatedKey(), true],
    ['with a newline', `${generatedKey()}\n`, true],
    ['a commit SHA (what the attack wrote)', 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3', false],
    ['one character short', generatedKey().slice(1), false],
    ['one character more', `${generatedKey()}A`, false],
    ['padding bits set (no generator writes it)', `${generatedKey().slice(0, 42)}B`, false],
    ['two newlines', `${generatedKey()}\n\n`, false],
    ['standard base64', `${generatedKey().slice(0, 42).replace(/./, '+')}A`, false],
    ['empty', '', false],
  ])('%s: %s', (_what, text, ok) => {
    expect(isGeneratedKey(text)).toBe(ok);
  });
});

describe('a secret.key that cannot be trusted stops the start', () => {
  it('refuses a changed key, saying to restore or remove it', () => {
    const { dir, file } = withKey('a94a8fe5ccb19ba61c4c0873d391e987982fbbd3');
    expect(() => load(dir)).toThrow(
      `${file} does not hold a key as Frameplane generates them (43 base64url characters): ` +
        'it was changed: Frameplane will not start with it. Restore it from a backup, or ' +
        'remove it if Frameplane did not make it',
    );
  });

  it.each([
    ['640', 0o640],
    ['604', 0o604],
    ['660', 0o660],
    ['666', 0o666],
  ])('refuses mode %s, saying chmod 600', (_octal, mode) => {
    const { dir, file } = withKey(generatedKey(), mode);
    expect(() => load(dir)).toThrow(`Make it private: chmod 600 ${file}.`);
  });

  it('refuses a file of another uid', () => {
    const { dir, file } = withKey(generatedKey());
    if (uid === 0) chownSync(file, 65534, 65534);
    const other = uid === 0 ? 0 : uid + 1; // not root: the service's uid is what is compared
    expect(() => load(dir, { uid: other })).toThrow(
      `belongs to uid ${uid === 0 ? 65534 : uid}, not to uid ${other} that runs Frameplane`,
    );
  });

  it('refuses a symbolic link, even to a good key, and never writes through a dangling one', () => {
    const good = withKey(generatedKey());
    const dir = dataDir();
    symlinkSync(good.file, join(dir, 'secret.key'));
    expect(() => load(dir)).toThrow(`${join(dir, 'secret.key')} is a symbolic link`);

    const dangling = dataDir();
    const target = join(dangling, 'elsewhere');
    symlinkSync(target, join(dangling, 'secret.key'));
    expect(() => load(dangling)).toThrow('is a symbolic link');
    expect(existsSync(target)).toBe(false);
  });

  it('refuses a FIFO without blocking, and a directory', () => {
    const dir = dataDir();
    execFileSync('mkfifo', ['-m', '600', join(dir, 'secret.key')]);
    expect(() => load(dir)).toThrow('is not a regular file');
    const other = dataDir();
    mkdirSync(join(other, 'secret.key'), { mode: 0o700 });
    expect(() => load(other)).toThrow('is not a regular file');
  });
});
