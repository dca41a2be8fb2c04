// The METRICS_PORT listener: GET /metrics without a token, for a scraper on the operator's
// network, on a port of its own so that it can be kept off the public one. A plain node:http
// server: it serves nothing else and runs none of the app's hooks.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.ts';

export interface MetricsListener {
  readonly port: number;
  close(): Promise<void>;
}

export async function startMetricsListener(
  metrics: Pick<Metrics, 'render' | 'contentType'>,
  { host, port }: { host: string; port: number },
  onError: (err: unknown) => void = () => {},
): Promise<MetricsListener> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res
        .writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' })
        .end('Method not allowed\n');
      return;
    }
    metrics.render().then(
      (body) => {
        res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => {
        onError(err);
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('Failed\n');
      },
    );
  });
  // A scraper keeps its connection open between scrapes: close() must not wait for it.
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // A scrape under way has its bounded reads to finish; then its connection goes too.
        setTimeout(() => server.closeAllConnections(), 3000).unref();
      }),
  };
}
