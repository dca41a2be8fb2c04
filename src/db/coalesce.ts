// Writes that arrive while others are under way go out together, as one statement (group
// commit): under load, a statement's fixed cost in PostgreSQL (starting its plan, the commit and
// its WAL flush, the round trip) is shared by the writes it carries instead of paid by each.
// With nothing under way, a write goes out at once, alone.
//
// Why not DataLoader: it batches what one tick asked for and hands equal keys the same answer;
// here every write is its own (two stops of one frame are two events), and the batch grows with
// the time the database takes, not with one tick.

export interface CoalesceOptions<T> {
  /** Statements under way at once; a write arriving beyond them waits for the next batch. */
  inFlight: number;
  /** Writes in one statement, at most. */
  max: number;
  /** Writes of the same key never share a statement: the later one waits for the next. */
  key: (item: T) => string;
}

interface Waiting<T, R> {
  item: T;
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
}

/**
 * `run` writes its items in one statement and answers one result per item, in their order.
 * When a batch of several fails, each of its items is tried again alone, so that one item the
 * database refuses (or a deadlock among the batch's rows) fails no other.
 */
export function coalesced<T, R>(run: (items: T[]) => Promise<R[]>, options: CoalesceOptions<T>) {
  let queue: Array<Waiting<T, R>> = [];
  let running = 0;
  let scheduled = false;

  async function settle(batch: Array<Waiting<T, R>>) {
    try {
      const results = await run(batch.map((w) => w.item));
      for (const [i, w] of batch.entries()) w.resolve(results[i] as R);
    } catch (err) {
      if (batch.length === 1) batch[0]?.reject(err);
      // One after another: a batch failed, so the database may be struggling.
      else for (const w of batch) await settle([w]);
    }
  }

  /** The next batch: the oldest writes, one per key, the others left in their order. */
  function take() {
    const keys = new Set<string>();
    const batch: Array<Waiting<T, R>> = [];
    const rest: Array<Waiting<T, R>> = [];
    for (const w of queue) {
      const k = options.key(w.item);
      if (batch.length < options.max && !keys.has(k)) {
        keys.add(k);
        batch.push(w);
      } else rest.push(w);
    }
    queue = rest;
    return batch;
  }

  function pump() {
    while (running < options.inFlight && queue.length > 0) {
      running++;
      void settle(take()).finally(() => {
        running--;
        pump();
      });
    }
  }

  return (item: T) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      // The writes of one turn of the event loop go out together; later ones wait for a free
      // statement.
      if (scheduled) return;
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        pump();
      });
    });
}
