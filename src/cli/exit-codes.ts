// What the CLI's exit status means (`frameplane help exit-codes`, and README, "The command
// line"). Scripts branch on these, so a number never changes meaning.
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

/** Each code in words: `frameplane help exit-codes` prints this table, README copies it. */
export const EXIT_MEANING: Record<keyof typeof EXIT, string> = {
  ok: 'done',
  failure: 'the service failed (5xx) or could not be reached; anything unexpected',
  usage: 'wrong command line (unknown command or option, missing argument)',
  auth: 'not logged in, or the token was refused (401)',
  notFound: 'no such thing, or not yours to see (404)',
  refused:
    'refused: not allowed (403), invalid, conflicting, failed precondition (other 4xx); ' +
    '`open` of a frame without URL',
  waitFailed: '`--wait`: the operation ended badly (`Error`, `Stopped`, a failed deployment)',
  waitTimeout: '`--wait`: no final status within `--timeout` (600 s by default)',
};

/** The table of exit codes, as `frameplane help exit-codes` prints it (no Markdown quotes). */
export function exitCodesText(): string {
  const rows = Object.entries(EXIT).map(
    ([name, code]) => `  ${code}  ${EXIT_MEANING[name as keyof typeof EXIT].replace(/`/g, '')}`,
  );
  const title = 'Exit codes of frameplane (a code never changes meaning: scripts may rely on it):';
  return `${title}\n\n${rows.join('\n')}\n`;
}

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
