// What the CLI's exit status means (README, "The command line"). Scripts branch on these, so a
// number never changes meaning.
import { FrameplaneError } from '../sdk/errors.ts';

export const EXIT = {
  ok: 0,
  /** The service failed (5xx) or could not be reached; anything unexpected. */
  failure: 1,
  /** The command line was wrong: unknown command or option, missing argument. */
  usage: 2,
  /** Not logged in, or the token was refused (401). */
  auth: 3,
  /** No such thing, or not yours to see (404: the service answers so for both). */
  notFound: 4,
  /**
   * Refused: not allowed (403), invalid, conflicting, precondition failed (other 4xx); `open`
   * of a frame that has no URL.
   */
  refused: 5,
  /** --wait: the operation ended badly (Error, Stopped, a failed deployment). */
  waitFailed: 6,
  /** --wait: the final status did not come within --timeout. */
  waitTimeout: 7,
} as const;

/** An error the CLI reports in one line and exits with `code`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

export function exitCodeOf(err: unknown): number {
  if (err instanceof CliError) return err.code;
  if (!(err instanceof FrameplaneError)) return EXIT.failure;
  if (err.status === 401) return EXIT.auth;
  if (err.status === 404) return EXIT.notFound;
  if (err.status >= 400 && err.status < 500) return EXIT.refused;
  return EXIT.failure;
}
