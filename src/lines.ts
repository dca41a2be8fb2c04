// A child process's output, line by line. Shared by the runner (build commands, container
// logs), the built-in cloud (the agent's log) and the embedded PostgreSQL (its server's
// output): it lives outside all three, because db/ may not import the runner.

/** Splits a stream into lines for `onLine`, keeping the last few in `tail`. */
export function lines(stream: NodeJS.ReadableStream, onLine: (l: string) => void, tail?: string[]) {
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const all = (partial + chunk).split('\n');
    partial = all.pop() ?? '';
    for (const l of all) {
      onLine(l);
      if (tail) {
        tail.push(l);
        if (tail.length > 5) tail.shift();
      }
    }
  });
  stream.on('end', () => {
    if (partial) onLine(partial);
  });
}
