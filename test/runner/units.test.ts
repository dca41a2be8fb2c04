// The agent's pure parts and small mechanisms, without a server: restart delays, Procfile and
// package.json plans, repository addresses, sync batches, health verdicts and the log tailer.
import { afterEach, describe, expect, it } from 'vitest';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isOomExit, restartDelayMs } from '../../src/runner/replica.ts';
import { parseProcfile, runPlan } from '../../src/runner/builder/plan.ts';
import { repositoryUrl } from '../../src/runner/builder/fetch.ts';
import { generatedDockerfile, runAsUser } from '../../src/runner/builder/dockerfile.ts';
import { replicaEvent } from '../../src/runner/supervisor.ts';
import { nanosOf } from '../../src/runner/runtimes/docker-logs.ts';
import { MAX_BATCH_BYTES, Outbox, SyncClient, takeBatch } from '../../src/runner/client.ts';
import pino from 'pino';
import { passes, probe } from '../../src/runner/health.ts';
import { tailFile } from '../../src/runner/log.ts';
import { freePort, isAlive, startTimeOf } from '../../src/runner/processes.ts';
import { reachableUrl } from '../../src/cloud/builtin.ts';
import type { SyncEvent } from '../../src/runner/protocol.ts';
import { at } from '../helpers/checked.ts';
import { waitFor } from '../helpers/wait.ts';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe('restart delays', () => {
  it.each([
    [0, 1000],
    [1, 2000],
    [2, 4000],
    [3, 8000],
    [4, 16_000],
    [5, 30_000],
    [50, 30_000],
  ])('attempt %i waits %i ms', (attempt, ms) => {
    expect(restartDelayMs(attempt)).toBe(ms);
  });

  it.each([
    [true, false, true],
    [false, true, true],
    [false, false, false],
    [true, true, true],
  ] as const)(
    'runtime says out of memory %s, heap exhausted %s: oom %s',
    (runtimeOom, heap, oom) => {
      // A SIGKILL alone is not an OOM: the runtime's flag (a container's OOMKilled) or Node's own message says so.
      expect(isOomExit(runtimeOom, heap)).toBe(oom);
    },
  );
});

describe('Procfile and build plan', () => {
  it('parses process types, skipping comments and blank lines', () => {
    expect(
      parseProcfile(
        '# a comment\nweb: node server.js --port $PORT\n\nworker:   node worker.js  \r\nbad line\n',
      ),
    ).toEqual({
      web: 'node server.js --port $PORT',
      worker: 'node worker.js',
    });
  });

  it('prefers the web process of a Procfile, installing dependencies first', () => {
    expect(
      runPlan({
        procfile: 'web: ./bin/serve',
        packageJson: JSON.stringify({ dependencies: { express: '^5' } }),
      }),
    ).toEqual({ build: ['npm install --no-audit --no-fund'], command: './bin/serve' });
  });

  it('runs npm start for a package.json, with install and build only when there is something to do', () => {
    expect(
      runPlan({ packageJson: JSON.stringify({ scripts: { start: 'node server.js' } }) }),
    ).toEqual({ build: [], command: 'npm start' });
    expect(
      runPlan({
        packageJson: JSON.stringify({
          scripts: { start: 'x', build: 'tsc' },
          devDependencies: { typescript: '5' },
        }),
      }),
    ).toEqual({
      build: ['npm install --no-audit --no-fund', 'npm run build'],
      command: 'npm start',
    });
    expect(runPlan({ packageJson: '{}', hasServerJs: true })).toEqual({
      build: [],
      command: 'npm start',
    });
  });

  it('installs with npm ci when a lock file pins the dependencies', () => {
    expect(
      runPlan({
        packageJson: JSON.stringify({ scripts: { start: 'x' }, dependencies: { a: '1' } }),
        hasLockFile: true,
      }),
    ).toEqual({ build: ['npm ci --no-audit --no-fund'], command: 'npm start' });
  });

  it('generates a Dockerfile that builds and runs the plan as the unprivileged user', () => {
    const text = generatedDockerfile(
      { build: ['npm ci --no-audit --no-fund', 'npm run build'], command: 'npm start' },
      'node:22',
    );
    expect(text.split('\n')).toEqual([
      'FROM node:22',
      'COPY --chown=1000:1000 . /app',
      'WORKDIR /app',
      'USER 1000:1000',
      'ENV HOME=/tmp NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false',
      'RUN npm ci --no-audit --no-fund',
      'RUN npm run build',
      'CMD ["sh","-c","npm start"]',
      '',
    ]);
  });

  it.each([
    [undefined, '1000:1000'],
    ['', '1000:1000'],
    ['root', '1000:1000'],
    ['0:0', '1000:1000'],
    ['node', 'node'],
    ['1001:1001', '1001:1001'],
  ])('an image whose user is %j runs as %s', (imageUser, user) =>
    expect(runAsUser(imageUser)).toBe(user),
  );

  it('reports replica events as they are, with their deployment and detail', () => {
    const base = { frameId: 'frm_x', replica: 1, generation: 3, deploymentId: 'dep_y' };
    const healthy = replicaEvent({ ...base, type: 'healthy' });
    expect(healthy).toMatchObject({ type: 'healthy', deployment_id: 'dep_y', generation: 3 });
    expect(healthy).not.toHaveProperty('detail');
    expect(replicaEvent({ ...base, type: 'crashed', detail: { exit_code: 4 } })).toMatchObject({
      type: 'crashed',
      detail: { exit_code: 4 },
    });
  });

  it('orders container log timestamps to the nanosecond', () => {
    expect(nanosOf('2026-11-23T10:00:00.000000001Z') > nanosOf('2026-11-23T10:00:00Z')).toBe(true);
    expect(nanosOf('2026-11-23T10:00:00.5Z')).toBe(nanosOf('2026-11-23T10:00:00.500000000Z'));
    expect(nanosOf('garbage')).toBe(0n);
  });

  it('says why a checkout cannot run', () => {
    expect(runPlan({})).toBeInstanceOf(Error);
    expect(runPlan({ packageJson: '{}' })).toBeInstanceOf(Error);
    expect(runPlan({ packageJson: '{nope' })).toBeInstanceOf(Error);
    expect(runPlan({ procfile: 'worker: x' })).toBeInstanceOf(Error);
  });

  it('builds repository addresses for URLs and directories, refusing names that climb out', () => {
    expect(repositoryUrl('https://github.com/', 'acme', 'app')).toBe(
      'https://github.com/acme/app.git',
    );
    expect(repositoryUrl('file:///srv/git', 'acme', 'app.git')).toBe(
      'file:///srv/git/acme/app.git',
    );
    expect(repositoryUrl('/srv/git', 'a.b', 'c_d-e')).toBe('/srv/git/a.b/c_d-e.git');
    expect(() => repositoryUrl('/srv/git', '..', 'app')).toThrow();
    expect(() => repositoryUrl('/srv/git', 'acme', 'a/b')).toThrow();
  });
});

const ev = (i: number): SyncEvent => ({
  frame_id: 'frm_x',
  replica: i % 3,
  type: 'healthy',
  generation: 1,
});

describe('sync batches', () => {
  it('keeps order and caps counts and bytes', () => {
    const events = Array.from({ length: 700 }, (_, i) => ev(i));
    expect(takeBatch(events, []).events).toEqual(events.slice(0, 500));
    const logs = Array.from({ length: 100 }, () => ({
      frame_id: 'frm_x',
      replica: 0,
      at: new Date().toISOString(),
      line: 'x'.repeat(8000),
    }));
    const b = takeBatch([ev(0)], logs);
    expect(b.events).toHaveLength(1);
    expect(Buffer.byteLength(JSON.stringify(b))).toBeLessThan(MAX_BATCH_BYTES + 1024);
    expect(b.logs.length).toBeGreaterThan(10);
    expect(b.logs.length).toBeLessThan(100);
  });

  it('removes only what was sent, even when lines were dropped meanwhile', () => {
    const outbox = new Outbox();
    outbox.event(ev(0));
    outbox.log('frm_x', 0, 'first');
    const sent = outbox.batch();
    outbox.event(ev(1));
    outbox.log('frm_x', 0, 'second');
    outbox.ack(sent);
    const rest = outbox.batch();
    expect(rest.events).toEqual([ev(1)]);
    expect(rest.logs.map((l) => l.line)).toEqual(['second']);
  });

  it('truncates overlong lines to what the server accepts', () => {
    const outbox = new Outbox();
    outbox.log('frm_x', 0, 'y'.repeat(10_000));
    expect(at(outbox.batch().logs, 0).line.length).toBe(8192);
  });
});

describe('the sync loop', () => {
  it('keeps what it could not send, retries while the server is down, and sends it in order when it returns', {
    timeout: 15_000,
  }, async () => {
    const bodies: any[] = [];
    const waits: string[] = [];
    let calls = 0;
    const server: Server = createServer((req, res) => {
      let body = '';
      req
        .on('data', (c) => (body += c))
        .on('end', () => {
          calls++;
          if (calls <= 2) {
            res.statusCode = 503;
            return res.end('{}');
          } // the server is away
          bodies.push(JSON.parse(body));
          const wait = new URL(req.url!, 'http://x').searchParams.get('wait')!;
          waits.push(wait);
          res.setHeader('content-type', 'application/json');
          const answer = () => res.end(JSON.stringify({ frames: [], sync_after_ms: 5000 }));
          if (wait === '0') answer();
          else setTimeout(answer, 10_000).unref(); // a long poll holds
        });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    });
    const answers: unknown[] = [];
    const client = new SyncClient({
      server: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
      token: 'fpa_test',
      log: pino({ level: 'silent' }),
      edge: { http_port: 8000, https_port: null },
      onAnswer: (frames) => answers.push(frames),
    });
    client.outbox.event(ev(0));
    const loop = client.run();
    cleanups.push(() => {
      client.stop();
      return loop;
    });
    await waitFor('the server to refuse a first sync', () => calls >= 1);
    expect(calls, 'the server is still away').toBeLessThanOrEqual(2); // retries are 1 s apart
    client.outbox.event(ev(1)); // while the server is away
    const until = (what: string, ok: () => boolean) =>
      waitFor(what, ok, { timeoutMs: 12_000, everyMs: 50 });
    await until('a first report taken', () => bodies.length >= 1);
    expect(calls).toBeGreaterThanOrEqual(3);
    expect(bodies[0].events).toEqual([ev(0), ev(1)]);
    expect(bodies[0].edge).toEqual({ http_port: 8000, https_port: null }); // told once taken
    expect(waits[0]).toBe('0');
    // Then it long-polls with an empty body, cut short when there is news to report.
    await until('a long poll', () => waits.length >= 2);
    expect(waits[1]).toBe('25');
    expect(bodies[1]).not.toHaveProperty('edge');
    const cut = Date.now();
    client.outbox.event(ev(2));
    await until('the news reported', () => bodies.length >= 3);
    expect(bodies[2].events).toEqual([ev(2)]);
    // Well under the 25 s wait: cut short by the news, not by the timeout.
    expect(Date.now() - cut).toBeLessThan(10_000);
    expect(answers.length).toBe(2);
  });
});

const local = (port: number) => ({ host: '127.0.0.1', port });

describe('health checks', () => {
  async function serve(status: number): Promise<number> {
    const server: Server = createServer((_req, res) => {
      res.statusCode = status;
      res.end('x');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise((r) => server.close(r)));
    return (server.address() as { port: number }).port;
  }

  it('reads the HTTP status; below 500 passes', async () => {
    expect(await probe(local(await serve(404)))).toEqual({ kind: 'http', status: 404 });
    expect(passes({ kind: 'http', status: 404 }, true)).toBe(true);
    expect(await probe(local(await serve(503)))).toEqual({ kind: 'http', status: 503 });
    expect(passes({ kind: 'http', status: 503 }, true)).toBe(false);
  });

  it('a closed port fails; a silent TCP service passes until it has spoken HTTP', async () => {
    expect(await probe(local(await freePort()))).toEqual({ kind: 'refused' });
    const { createServer: tcp } = await import('node:net');
    const silent = tcp(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => {
      silent.close();
    });
    const p = await probe(local((silent.address() as { port: number }).port), { timeoutMs: 300 });
    expect(p).toEqual({ kind: 'tcp' });
    expect(passes(p, false)).toBe(true);
    expect(passes(p, true)).toBe(false);
  });

  it('a port that accepts and hangs up at once (a port proxy with no app behind it) fails', async () => {
    const { createServer: tcp } = await import('node:net');
    const proxy = tcp((s) => s.destroy());
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => {
      proxy.close();
    });
    const end = local((proxy.address() as { port: number }).port);
    for (const http of [true, false]) {
      const p = await probe(end, { http, timeoutMs: 1000 });
      expect(p).toEqual({ kind: 'closed' });
      expect(passes(p, false, http)).toBe(false);
    }
  });
});

describe('log tailing', () => {
  it('delivers whole lines, keeps a cut multi-byte character whole, and resumes from an offset', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fp-tail-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'out.log');
    writeFileSync(file, 'one\ntw');
    const lines: string[] = [];
    const tailer = tailFile(file, 0, (l) => lines.push(l));
    await waitFor('the first line', () => lines.length > 0);
    appendFileSync(file, Buffer.from('o é\n', 'utf8').subarray(0, 3));
    // A fixed time on purpose: the tailer reads every 300 ms (POLL_MS), and one of its reads
    // must end inside the cut character, which nothing outside it shows.
    await new Promise((r) => setTimeout(r, 400));
    appendFileSync(file, Buffer.from('o é\n', 'utf8').subarray(3));
    appendFileSync(file, 'three');
    // The read that finds the rest of the line also finds "three", written with it.
    await waitFor('the second line', () => lines.length > 1);
    expect(lines).toEqual(['one', 'two é']);
    const offset = tailer.offset();
    tailer.stop(false);
    const again: string[] = [];
    tailFile(file, offset, (l) => again.push(l)).stop();
    expect(again).toEqual(['three']);
  });
});

describe('process identity', () => {
  it('knows this process by pid and start time, and a wrong start time is another process', () => {
    const start = startTimeOf(process.pid);
    expect(isAlive(process.pid, start)).toBe(true);
    if (start) expect(isAlive(process.pid, `${start}1`)).toBe(false);
    expect(isAlive(0)).toBe(false);
  });

  it('reaches the service through a wildcard listen address', () => {
    expect(reachableUrl('http://0.0.0.0:8080')).toBe('http://127.0.0.1:8080');
    expect(reachableUrl('http://[::]:8080/')).toBe('http://[::1]:8080');
    expect(reachableUrl('http://127.0.0.1:3000')).toBe('http://127.0.0.1:3000');
  });
});
