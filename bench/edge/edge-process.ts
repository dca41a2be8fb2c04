// The agent's edge (`--plane=builtin`, or `haproxy` with `--dir`) in a process of its own, for bench/edge/run.ts: `--routes=N` frames, each
// at `f<i>.bench.test`, all to the app at `--upstream`; with `--tls=<dir>`, HTTPS too with the
// certificate there for every name. Prints one JSON line when it serves: its ports and the
// heap its routes take (after a full GC, --expose-gc).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startEdge, type EdgePlane } from '../../src/runner/edge/edge.ts';
import { agentLogger } from '../../src/runner/log.ts';

const { values } = parseArgs({
  options: {
    routes: { type: 'string', default: '10' },
    upstream: { type: 'string' },
    tls: { type: 'string' },
    plane: { type: 'string', default: 'builtin' },
    dir: { type: 'string' },
  },
});
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const heap = () => {
  gc();
  return process.memoryUsage().heapUsed;
};

const before = heap();
const tls = values.tls;
const cert = tls && {
  certificate: readFileSync(join(tls, 'edge.pem'), 'utf8'),
  private_key: readFileSync(join(tls, 'edge.key'), 'utf8'),
};
const edge = await startEdge({
  port: 0,
  plane: values.plane as EdgePlane,
  dir: values.dir,
  slots: Number(values.routes) + 10,
  ...(tls && cert
    ? {
        https: {
          port: 0,
          log: agentLogger('warn'),
          source: {
            certificate: async (hostname: string) => ({ hostname, fingerprint: 'bench', ...cert }),
            challenge: async () => undefined,
          },
        },
      }
    : {}),
});
const routes = Number(values.routes);
const upstream = { host: '127.0.0.1', port: Number(values.upstream) };
const names = new Map<string, string>();
for (let i = 0; i < routes; i++) {
  const host = `f${i}.bench.test`;
  edge.routes.set({ frameId: `frm_${i}`, hosts: [host], state: 'running', upstreams: [upstream] });
  names.set(host, 'bench');
}
await edge.certificates?.follow(new Map([...names].slice(0, 100)));
const after = heap();
process.stdout.write(
  `${JSON.stringify({ ...edge.info, routes, heapBytes: after - before, rss: process.memoryUsage().rss })}\n`,
);
process.on('SIGTERM', () => void edge.close().then(() => process.exit(0)));
