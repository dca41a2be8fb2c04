// Keyset paging by id, the way most lists page: rows after the cursor's id, in id order, one
// more than asked for so the page knows whether another follows. Ids are ULIDs, so id order
// is creation order.
import type { SelectQueryBuilder } from 'kysely';
import { decodeCursor, type Page, toPage } from '../paging.ts';

// Kysely cannot type a column reference chosen by the caller over any builder: the column is
// one of ours ('id', 'f.id'), never user input.
// biome-ignore lint/suspicious/noExplicitAny: any builder of ours, whatever its tables.
type AnySelect<O> = SelectQueryBuilder<any, any, O>;

export async function pageById<O extends { id: string }, T>(
  query: AnySelect<O>,
  limit: number,
  cursor: string | undefined,
  present: (row: O) => T,
  column = 'id',
): Promise<Page<T>> {
  const after = decodeCursor(cursor, 1)?.[0];
  const q = after ? query.where(column, '>', after) : query;
  const rows = await q
    .orderBy(column)
    .limit(limit + 1)
    .execute();
  return toPage(rows, limit, (r) => [r.id], present);
}
