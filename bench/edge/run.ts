// `npm run bench:edge` (also the last part of `npm run bench`): the built-in edge against the
// same app reached directly and through HAProxy with a static configuration (Debian's
// `haproxy`), in one run, as issue 35 sets the targets. Each plane and each app is a process of
// its own; autocannon (16 connections, keep-alive) runs here, and the planes take turns in each
// round, so that a slower minute of the machine falls on all of them. Writes
// bench/RESULTS-edge.md (RESULTS-edge.quick.md); exits non-zero when a target is missed (with --quick, only on errors).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { freePort } from '../../test/helpers/smtp.ts';
import { selfSigned } from '../../test/helpers/tls.ts';
import { median } from '../rounds.ts';
import { routeChanges } from './route-change.ts';

const quick = process.argv.includes('--quick');
const secondsFlag = process.argv.find((a) => a.startsWith('--seconds='))?.slice(10);
const SECONDS = Number(secondsFlag ?? (quick ? 3 : 5));
const ROUNDS = quick ? 1 : 3;
const MANY = 10_000;

const APPS = {
  hello: `s.end('hello')`,
  // 0.5 ms of CPU per request, as an app that renders something.
  work: `const t = process.hrtime.bigint(); while (process.hrtime.bigint() - t < 500000n); s.end('done')`,
};

const children: ChildProcess[] = [];
/** Starts a process and resolves with the first line it prints. */
function start(cmd: string, args: string[]): Promise<string> {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(out.slice(0, nl));
    });
    child.once('exit', (code) => reject(new Error(`${cmd} exited (${code})`)));
  });
}
const app = async (body: string) =>
  Number(
    await start(process.execPath, [
      '-e',
      `const s0 = require('http').createServer((q, s) => { ${body} });
       s0.keepAliveTimeout = 60000;
       s0.listen(0, '127.0.0.1', () => console.log(s0.address().port));`,
    ]),
  );
const edge = async (upstream: number, routes: number, tls?: string, plane = 'builtin') =>
  JSON.parse(
    await start(process.execPath, [
      '--expose-gc',
      '--import',
      'tsx',
      'bench/edge/edge-process.ts',
      `--upstream=${upstream}`,
      `--routes=${routes}`,
      `--plane=${plane}`,
      `--dir=${join(dir, `plane-${upstream}-${routes}-${plane}`)}`,
      ...(tls ? [`--tls=${tls}`] : []),
    ]),
  ) as { http_port: number; https_port: number | null; heapBytes: number; rss: number };

async function haproxy(dir: string, upstream: number) {
  const port = await freePort();
  const cfg = join(dir, `haproxy-${upstream}.cfg`);
  writeFileSync(
    cfg,
    [
      'global',
      '  maxconn 4096',
      'defaults',
      '  mode http',
      '  option http-keep-alive',
      '  timeout connect 5s',
      '  timeout client 60s',
      '  timeout server 60s',
      'frontend edge',
      `  bind 127.0.0.1:${port}`,
      '  default_backend app',
      'backend app',
      `  server app 127.0.0.1:${upstream}`,
      '',
    ].join('\n'),
  );
  const child = spawn('haproxy', ['-db', '-f', cfg], { stdio: 'ignore' });
  children.push(child);
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`http://127.0.0.1:${port}/`).then(
      () => true,
      () => false,
    );
    if (up) return port;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('haproxy did not start');
}

interface Load {
  rps: number;
  p99: number;
  errors: number;
}
/** autocannon against a port, with these Host headers in turn. */
async function load(port: number, hosts: string[], connections = 16): Promise<Load> {
  const r = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration: SECONDS,
    requests: hosts.map((host) => ({ method: 'GET', path: '/', headers: { host } })),
  });
  if (r.errors + r.timeouts + r.non2xx > 0)
    console.error(
      `port ${port}: ${r.errors} errors, ${r.timeouts} timeouts, statuses`,
      r.statusCodeStats,
    );
  return {
    rps: r.requests.average,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts + r.non2xx,
  };
}

/** One full TLS handshake, then closed: whether it succeeded. */
const handshake = (port: number, host: string, ca: string) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ host: '127.0.0.1', port, servername: host, ca }, () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

/** New TLS connections a second, 16 at a time, once the plane serves the certificate
 *  (HAProxy is given it through its Runtime API just after it starts). */
async function handshakes(port: number, host: string, ca: string) {
  for (let i = 0; i < 100 && !(await handshake(port, host, ca)); i++)
    await new Promise((r) => setTimeout(r, 50));
  let done = 0;
  let errors = 0;
  const until = Date.now() + SECONDS * 1000;
  const worker = async () => {
    while (Date.now() < until)
      if (await handshake(port, host, ca)) done++;
      else errors++;
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return { perSecond: done / SECONDS, errors };
}

const dir = mkdtempSync(join(tmpdir(), 'frameplane-bench-edge-'));
const lines: string[] = [];
const say = (line = '') => {
  lines.push(line);
  console.log(line);
};
let failed = false;
const target = (name: string, ok: boolean, figure: string) => {
  if (!ok && !quick) failed = true;
  say(`| ${name} | ${figure} | ${ok ? 'met' : 'MISSED'} |`);
};

try {
  const cert = selfSigned(dir, 'edge', 'bench', ['*.bench.test']);
  const ports = { hello: await app(APPS.hello), work: await app(APPS.work) };
  // The built-in plane before the hello-world app, with 10 routes: also the 10 of `routes/10`.
  const few = await edge(ports.hello, 10);
  // The built-in plane before the hello-world app, with 10 routes: also the 10 of `routes/10`.
  const planes = {
    hello: {
      direct: ports.hello,
      haproxy: await haproxy(dir, ports.hello),
      builtin: few.http_port,
      'haproxy-plane': (await edge(ports.hello, 10, undefined, 'haproxy')).http_port,
    },
    work: {
      direct: ports.work,
      haproxy: await haproxy(dir, ports.work),
      builtin: (await edge(ports.work, 10)).http_port,
      'haproxy-plane': (await edge(ports.work, 10, undefined, 'haproxy')).http_port,
    },
  };
  const hostsOf = (n: number) =>
    Array.from({ length: Math.min(n, 100) }, (_, i) => `f${i}.bench.test`);
  const runs: Record<string, Load[]> = {};
  const measure = async (key: string, port: number, hosts: string[], connections?: number) => {
    const done = await load(port, hosts, connections);
    runs[key] = [...(runs[key] ?? []), done];
  };
  const many = await edge(ports.hello, MANY);
  const spread = hostsOf(MANY).map((h, i) => h.replace(/\d+/, String(i * 97)));
  // Warm every plane (JIT, pools) with the hosts it is measured with, unmeasured.
  const warm = (port: number, hosts: string[]) =>
    autocannon({
      url: `http://127.0.0.1:${port}`,
      connections: 16,
      duration: 2,
      requests: hosts.map((host) => ({ method: 'GET', path: '/', headers: { host } })),
    });
  for (const p of [...Object.values(planes.hello), ...Object.values(planes.work)])
    await warm(p, hostsOf(1));
  await warm(few.http_port, hostsOf(10));
  await warm(many.http_port, spread);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [app, byPlane] of Object.entries(planes))
      for (const [plane, port] of Object.entries(byPlane))
        await measure(`${app}/${plane}`, port, hostsOf(1));
    await measure('routes/10', few.http_port, hostsOf(10));
    await measure(`routes/${MANY}`, many.http_port, spread);
  }
  const wide = await load(planes.hello.builtin, hostsOf(1), 256);
  const tls = {
    builtin: await handshakes(
      (await edge(ports.hello, 10, dir)).https_port as number,
      'f1.bench.test',
      cert.cert,
    ),
    haproxy: await handshakes(
      (await edge(ports.hello, 10, dir, 'haproxy')).https_port as number,
      'f1.bench.test',
      cert.cert,
    ),
  };

  const changes = await routeChanges(quick ? 5 : 20);
  const p99Of = (xs: number[]) =>
    [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.99) - 1] ?? 0;

  const med = (key: string, f: (l: Load) => number) => median((runs[key] ?? []).map(f));
  const rps = (key: string) => med(key, (l) => l.rps);
  const p99 = (key: string) => med(key, (l) => l.p99);
  const errors =
    Object.values(runs)
      .flat()
      .reduce((n, l) => n + l.errors, 0) + wide.errors;

  say(
    `# The edge: ${new Date().toISOString()}, ${SECONDS} s runs, ${ROUNDS} round(s), medians ` +
      "(ratios: the median of each round's)",
  );
  say();
  say('| app / plane | req/s | p99 ms |');
  say('|---|---|---|');
  for (const key of Object.keys(runs)) say(`| ${key} | ${rps(key).toFixed(0)} | ${p99(key)} |`);
  say(`| hello/builtin at 256 connections | ${wide.rps.toFixed(0)} | ${wide.p99} |`);
  say(`| new TLS connections a second (built-in) | ${tls.builtin.perSecond.toFixed(0)} | |`);
  say(`| new TLS connections a second (HAProxy plane) | ${tls.haproxy.perSecond.toFixed(0)} | |`);
  say();
  say('| target | measured | |');
  say('|---|---|---|');
  // Each round measures the two sides one after the other: the median of the rounds' ratios
  // leaves out what drifts between rounds (the machine's other load, its clock).
  const ratio = (a: string, b: string) =>
    median((runs[a] ?? []).map((l, i) => l.rps / (runs[b]?.[i]?.rps ?? Number.NaN)));
  const x = (n: number) => `${n.toFixed(2)} ×`;
  /** `plane` serves `app` at least `min` × what `than` serves. */
  const atLeast = (name: string, plane: string, than: string, min: number) =>
    target(name, ratio(plane, than) >= min, x(ratio(plane, than)));
  /** The p99 `plane` adds to the app reached directly, at most `max` ms. */
  const addsAtMost = (name: string, plane: string, max: number) => {
    const added = p99(plane) - p99('hello/direct');
    target(name, added <= max, `${added} ms`);
  };
  atLeast('built-in ≥ 0.9 × direct, app of 0.5 ms', 'work/builtin', 'work/direct', 0.9);
  atLeast('built-in ≥ 0.5 × static HAProxy, hello-world', 'hello/builtin', 'hello/haproxy', 0.5);
  atLeast(
    'HAProxy plane ≥ 0.95 × direct, app of 0.5 ms',
    'work/haproxy-plane',
    'work/direct',
    0.95,
  );
  atLeast(
    'HAProxy plane (live maps) ≥ 0.9 × static HAProxy, hello-world',
    'hello/haproxy-plane',
    'hello/haproxy',
    0.9,
  );
  addsAtMost('p99 added ≤ 2 ms at 16 connections (HAProxy plane)', 'hello/haproxy-plane', 2);
  addsAtMost('p99 added ≤ 5 ms at 16 connections (built-in)', 'hello/builtin', 5);
  target('no errors at 256 connections', wide.errors === 0, `${wide.errors}`);
  const flat = ratio('routes/10', `routes/${MANY}`);
  target(`${MANY} routes within 1.1 × of 10`, flat <= 1.1, x(flat));
  target('no errors in any run', errors === 0, `${errors}`);
  const ms = (n: number) => `${n.toFixed(0)} ms`;
  target(
    'a stop served by the edge within 1 s p99 of the API call',
    p99Of(changes.stops) <= 1000,
    ms(p99Of(changes.stops)),
  );
  say();
  say(
    `Edge heap for ${MANY} routes: ${(many.heapBytes / 2 ** 20).toFixed(1)} MB (10 routes: ${(few.heapBytes / 2 ** 10).toFixed(0)} KB); its RSS ${(many.rss / 2 ** 20).toFixed(0)} MB.`,
  );
  say(`TLS handshakes failed: ${tls.builtin.errors} (built-in), ${tls.haproxy.errors} (HAProxy).`);
  say(
    `Route changes (${changes.stops.length} of each): a stop shows at the edge in ` +
      `${ms(median(changes.stops))} (median), ${ms(p99Of(changes.stops))} (p99) after the API's ` +
      `answer; a start, the app's own start included, in ${ms(median(changes.starts))}, ` +
      `${ms(p99Of(changes.starts))}.`,
  );
  if (errors > 0) failed = true;
  writeFileSync(`bench/RESULTS-edge${quick ? '.quick' : ''}.md`, `${lines.join('\n')}\n`);
} finally {
  for (const c of children) c.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
