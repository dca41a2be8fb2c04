// The service's secret key (secrets at rest, token signatures): SECRET_KEY, or the one generated
// into DATA_DIR/secret.key on the first start. Whoever can change that file can forge a token
// for any user after the next restart (issue 34: root once wrote a commit SHA into it through a
// tenant's symlink), so a file that is not exactly what Frameplane writes stops the start.
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

const BYTES = 32;
/** 32 bytes, base64url: 43 characters, and a trailing newline allowed (an editor's). */
const FORMAT = /^[A-Za-z0-9_-]{43}\n?$/;

export class SecretKeyError extends Error {}

/** True for exactly what secretKey() writes: a key that decodes to 32 bytes and back. */
export function isGeneratedKey(text: string): boolean {
  if (!FORMAT.test(text)) return false;
  const key = text.trimEnd();
  return Buffer.from(key, 'base64url').toString('base64url') === key;
}

function refuse(file: string, problem: string, fix: string): never {
  throw new SecretKeyError(
    `${file} ${problem}: Frameplane will not start with it. ${fix} ` +
      '(SECRET_KEY, when set, is used instead of the file.)',
  );
}

const REMOVE =
  'remove it if Frameplane did not make it: a new key is then generated, and secrets stored ' +
  'under the old one can no longer be read.';

/**
 * Reads DATA_DIR/secret.key without following a link or blocking on a FIFO, checked on the
 * opened file itself (no window between check and read).
 */
function readKeyFile(file: string, uid: number): string {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP')
      refuse(
        file,
        'is a symbolic link',
        'Replace it with a copy of the file it names if that holds your key (chmod 600), ' +
          `or ${REMOVE}`,
      );
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) refuse(file, 'is not a regular file', `Move it away, or ${REMOVE}`);
    if (st.uid !== uid)
      refuse(
        file,
        `belongs to uid ${st.uid}, not to uid ${uid} that runs Frameplane`,
        `If it holds your key, give it to that user (chown ${uid} ${file}), or ${REMOVE}`,
      );
    if (st.mode & 0o077)
      refuse(
        file,
        `is open to others (mode ${(st.mode & 0o777).toString(8)})`,
        `Make it private: chmod 600 ${file}.`,
      );
    const buffer = Buffer.alloc(64);
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, n).toString('latin1');
    if (!isGeneratedKey(text))
      refuse(
        file,
        'does not hold a key as Frameplane generates them (43 base64url characters): ' +
          'it was changed',
        `Restore it from a backup, or ${REMOVE}`,
      );
    return text.trimEnd();
  } finally {
    closeSync(fd);
  }
}

export interface SecretKeyOptions {
  secretKey: string | undefined;
  dataDir: string;
  /** Told once, when a key is generated. */
  generated?: (file: string) => void;
  uid?: number;
}

/** The key to use; throws SecretKeyError when DATA_DIR/secret.key cannot be trusted. */
export function secretKey(o: SecretKeyOptions): string {
  if (o.secretKey) return o.secretKey;
  const file = join(o.dataDir, 'secret.key');
  const uid = o.uid ?? process.getuid?.() ?? 0;
  // The usual modes: the embedded database narrows DATA_DIR itself, and its parents must stay
  // passable for the `postgres` user when run as root.
  mkdirSync(o.dataDir, { recursive: true });
  try {
    // O_EXCL: never through a link, never over a file that exists.
    writeFileSync(file, randomBytes(BYTES).toString('base64url'), { mode: 0o600, flag: 'wx' });
    o.generated?.(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return readKeyFile(file, uid);
}
