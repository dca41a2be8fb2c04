// Argon2id, a memory-hard hash, with OWASP's minimum parameters (19 MiB, 2 passes). Prebuilt
// binaries (@node-rs/argon2) install with no compiler and hash off the event loop.
import { hash, verify } from '@node-rs/argon2';

const OPTIONS = { memoryCost: 19456, timeCost: 2, parallelism: 1 };

export const hashPassword = (password: string) => hash(password, OPTIONS);

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

// Compared against when the e-mail is unknown, so that a wrong address and a wrong password
// take the same time.
let dummy: Promise<string> | undefined;
export const dummyHash = () => (dummy ??= hashPassword('not-a-real-password-0000'));
