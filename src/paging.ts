// Keyset pagination: the cursor is the sort key of the last row, opaque to clients. Outside
// http/ so that the db layer (db/paging.ts) and services page without depending on the server.
import { AppError } from './errors.ts';

export function encodeCursor(key: string[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

export function decodeCursor(
  cursor: string | undefined,
  parts: number,
  valid: (key: string[]) => boolean = () => true,
): string[] | undefined {
  if (cursor === undefined) return undefined;
  try {
    const key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    // Keys go into SQL: only printable text we could have issued.
    if (
      Array.isArray(key) &&
      key.length === parts &&
      key.every((k) => typeof k === 'string' && /^[\x20-\x7e]{1,200}$/.test(k)) &&
      valid(key)
    )
      return key;
  } catch {
    /* fall through */
  }
  throw new AppError(
    422,
    'invalid_cursor',
    'Unprocessable content',
    'The cursor is not one this service issued.',
    [{ path: 'cursor', message: 'is not a valid cursor' }],
  );
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** Rows were fetched with limit + 1; the extra row tells whether another page exists. */
export function toPage<R, T>(
  rows: R[],
  limit: number,
  keyOf: (r: R) => string[],
  present: (r: R) => T,
): Page<T> {
  const more = rows.length > limit;
  const shown = more ? rows.slice(0, limit) : rows;
  const last = shown.at(-1);
  return {
    data: shown.map(present),
    next_cursor: more && last !== undefined ? encodeCursor(keyOf(last)) : null,
  };
}
