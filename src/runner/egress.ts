// The agent's egress proxy for builds of the process runtime. A build runs in a network
// namespace of its own with nothing but loopback; inside, a forwarder passes 127.0.0.1:<port>
// to this proxy's Unix socket (sandbox.sh), and the build's HTTP_PROXY/HTTPS_PROXY point at it.
// The proxy resolves each destination itself, checks every address (egress-policy.ts) and
// connects to the address it checked, never to the name again: a name that resolves to a
// public address for the check and to 127.0.0.1 for the connection (DNS rebinding) gains
// nothing. HTTPS goes through CONNECT (the payload stays end to end encrypted); plain HTTP is
// forwarded request by request.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import { lookup as dnsLookup } from 'node:dns/promises';
import { chmodSync, rmSync } from 'node:fs';
import { refusal, type AllowRule } from './egress-policy.ts';

export interface EgressOptions {
  socketPath: string;
  allow: AllowRule[];
  /** Resolves a name to every address (tests give their own). */
  lookup?: (host: string) => Promise<string[]>;
  /** Opens a connection to an address that passed the check (tests count them). */
  connect?: (address: string, port: number) => Socket;
  /** One line per refusal, for the agent's log. */
  onRefused?: (target: string, why: string) => void;
}

const systemLookup = async (host: string) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** host:port of a CONNECT target or an absolute http:// URL; undefined when malformed. */
export function targetOf(req: IncomingMessage): { host: string; port: number } | undefined {
  try {
    const url =
      req.method === 'CONNECT' ? new URL(`http://${req.url ?? ''}`) : new URL(req.url ?? '');
    if (req.method !== 'CONNECT' && url.protocol !== 'http:') return undefined;
    const port = Number(url.port || 80);
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    return host ? { host, port } : undefined;
  } catch {
    return undefined;
  }
}

export async function startEgressProxy(o: EgressOptions): Promise<Server> {
  const lookup = o.lookup ?? systemLookup;
  const open = o.connect ?? ((address, port) => netConnect({ host: address, port }));

  /** The checked address to connect to, or why the target is refused. */
  async function decide(
    host: string,
    port: number,
  ): Promise<{ address: string } | { why: string }> {
    let addresses: string[];
    try {
      addresses = await lookup(host);
    } catch (err) {
      return { why: `cannot resolve ${host}: ${(err as NodeJS.ErrnoException).code ?? err}` };
    }
    if (addresses.length === 0) return { why: `${host} has no address` };
    // Every answer must pass: a name answering both a public and a private address is refused.
    for (const a of addresses) {
      const why = refusal(a, port, o.allow);
      if (why) return { why: `${host} resolves to ${a}: ${why.replace(`${a} is `, '')}` };
    }
    return { address: addresses[0] as string };
  }

  const refuse = (target: string, why: string) => {
    o.onRefused?.(target, why);
    return `Frameplane refused ${target}: ${why} (builds reach only public addresses; an operator allows more with BUILD_EGRESS_ALLOW)\n`;
  };

  const server = createServer(async (req, res) => {
    const t = targetOf(req);
    if (!t) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('absolute http:// URL expected\n');
      return;
    }
    const d = await decide(t.host, t.port);
    if ('why' in d) {
      res
        .writeHead(403, { 'content-type': 'text/plain' })
        .end(refuse(`${t.host}:${t.port}`, d.why));
      return;
    }
    const url = new URL(req.url ?? '/');
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    const out = request({
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      // The checked address, not the name again.
      createConnection: () => open(d.address, t.port),
    });
    out.on('response', (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(out);
  });

  server.on('connect', async (req: IncomingMessage, client: Socket, head: Buffer) => {
    client.on('error', () => client.destroy());
    const t = targetOf(req);
    if (!t) return client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    const d = await decide(t.host, t.port);
    if ('why' in d) {
      const body = refuse(`${t.host}:${t.port}`, d.why);
      return client.end(
        `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    }
    const up = open(d.address, t.port);
    up.on('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) up.write(head);
      up.pipe(client);
      client.pipe(up);
    });
    up.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
    client.on('close', () => up.destroy());
    up.on('close', () => client.destroy());
  });

  rmSync(o.socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.socketPath, () => resolve());
  });
  // Each frame's forwarder connects as that frame's uid.
  chmodSync(o.socketPath, 0o666);
  return server;
}
