// The supervisor of one frame (src/runner/frame-runner.ts) on a fake runtime whose replicas are
// small HTTP servers on loopback, or ones that exit at once, or never listen: a new release
// takes over only once healthy (CONTRACT 5). While a release serves, a new one that crashes or
// never passes its health check fails at once, reported once, never tried again (also by an
// agent that adopts the frame), and the serving replicas go on under the new generation. With
// nothing serving, a crashing release restarts with delays (the server's back-off counts it).
// Each world has its own edge: the frame is reached at its hostname, and its route follows what
// serves: a deploy drains the old release's requests in flight before stopping it.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { FrameRunner } from '../../src/runner/frame-runner.ts';
import type { DesiredFrame, SyncEvent } from '../../src/runner/protocol.ts';
import type {
  Endpoint,
  ExitInfo,
  ReplicaRuntime,
  RunningReplica,
} from '../../src/runner/runtimes/runtime.ts';
import { freePort } from '../../src/runner/processes.ts';
import { startEdge } from '../../src/runner/edge/edge.ts';
import { waitFor } from '../helpers/wait.ts';
import { hit, hitFrame, isEdgePage, until } from './fixture.ts';

type Behaviour = 'serves' | 'crashes' | 'silent';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A runtime whose replicas of a deployment behave as `behaviour` says; it records what it did. */
function fakeRuntime(behaviour: Record<string, Behaviour>) {
  const built: string[] = [];
  const started: string[] = [];
  const stopped: string[] = [];
  /** The deployments that have a /slow request in hand. */
  const slowOn: string[] = [];
  const runtime: ReplicaRuntime = {
    kind: 'process',
    async build(r) {
      built.push(r.deploymentId);
      r.onFetched('c0ffee0');
      return { deploymentId: r.deploymentId, artifact: r.deploymentId, commitSha: 'c0ffee0' };
    },
    reuse: async () => true,
    async start(spec): Promise<RunningReplica> {
      started.push(spec.deploymentId);
      let exited: (e: ExitInfo) => void = () => {};
      const exit = new Promise<ExitInfo>((r) => {
        exited = r;
      });
      let server: Server | undefined;
      let endpoint: Endpoint = { host: '127.0.0.1', port: await freePort() }; // nothing listens
      if (behaviour[spec.deploymentId] === 'serves') {
        const s = createServer((q, res) => {
          if (q.url !== '/slow') return res.end(`hello ${spec.deploymentId}`);
          slowOn.push(spec.deploymentId);
          setTimeout(() => res.end(`slow ${spec.deploymentId}`), 3000);
        });
        await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
        endpoint = { host: '127.0.0.1', port: (s.address() as AddressInfo).port };
        server = s;
        cleanups.push(() => s.close());
      }
      if (behaviour[spec.deploymentId] === 'crashes')
        setTimeout(() => exited({ code: 1, signal: null, oom: false }), 20);
      return {
        endpoint,
        exit,
        async stop() {
          stopped.push(spec.deploymentId);
          server?.close();
          server?.closeAllConnections();
          exited({ code: null, signal: 'SIGTERM', oom: false });
        },
        detach() {},
        ref: () => ({ id: `${spec.deploymentId}/${spec.index}`, endpoint, cursor: '' }),
        usage: async () => undefined,
      };
    },
    adopt: async () => undefined,
    prune: async () => {},
    forget: async () => {},
  };
  return { runtime, built, started, stopped, slowOn };
}

const HOSTNAME = 'web-test01.localhost';

async function world(behaviour: Record<string, Behaviour>, port: number) {
  const fake = fakeRuntime(behaviour);
  const events: SyncEvent[] = [];
  const edge = await startEdge({ port: 0 });
  cleanups.push(() => edge.close());
  const edgePort = edge.info!.http_port;
  const runner = (runtime = fake.runtime, releasesKept?: number) => {
    const r = new FrameRunner('frm_test', {
      releasesKept,
      routes: edge.routes,
      gitBaseUrl: 'file:///nowhere',
      startTimeoutMs: 1500,
      log: pino({ level: 'silent' }),
      event: (e) => events.push(e),
      build: () => {},
      line: () => {},
      changed: () => {},
      runtime,
    });
    cleanups.push(() => r.remove());
    return r;
  };
  const spec = (generation: number, deployment_id: string): DesiredFrame => ({
    frame_id: 'frm_test',
    generation,
    desired_state: 'running',
    replica_count: 2,
    port,
    health_check_path: '/',
    build_failed: false,
    git_repository_owner: 'acme',
    git_repository: 'app',
    git_repository_branch: 'main',
    deployment_id,
    commit_sha: null,
    env: {},
    volumes: [],
    hostname: HOSTNAME,
    suspended: false,
    domains: [],
    certificates: [],
  });
  const of = (deploymentId: string, types: string[]) =>
    events.filter((e) => e.deployment_id === deploymentId && types.includes(e.type));
  const get = (path = '/', timeoutMs = 3000) => hitFrame(edgePort, HOSTNAME, path, timeoutMs);
  const answers = (body: string) =>
    until(`${body} at ${HOSTNAME}`, async () => {
      const r = await get();
      return 'body' in r && r.body === body;
    });
  return { ...fake, events, runner, spec, of, answers, get, edge };
}

/** v1 serving on both replicas. */
async function serving(behaviour: Record<string, Behaviour>) {
  const w = await world({ v1: 'serves', ...behaviour }, await freePort());
  const r = w.runner();
  await r.update(w.spec(1, 'v1'));
  await until('v1 healthy', async () => w.of('v1', ['healthy']).length === 2);
  await w.answers('hello v1');
  return { ...w, r };
}

describe('a new release while another serves (CONTRACT 5)', () => {
  it('crashing at start: fails at once, reported once, never retried (nor after adoption)', {
    timeout: 30_000,
  }, async () => {
    const w = await serving({ v2: 'crashes' });
    await w.r.update(w.spec(2, 'v2'));
    await until('v2 crashed', async () => w.of('v2', ['crashed']).length > 0);
    // The serving replicas, said again under the new generation.
    await until(
      'v1 re-reported',
      async () => w.of('v1', ['healthy']).filter((e) => e.generation === 2).length === 2,
    );
    // A fixed time on purpose: past the first restart delay (1 s), nothing of v2 starts again.
    await new Promise((r) => setTimeout(r, 1500));
    expect(w.of('v2', ['crashed', 'oom', 'unhealthy'])).toHaveLength(1);
    expect(w.of('v2', ['crashed'])[0]).toMatchObject({
      generation: 2,
      detail: { exit_code: 1, message: expect.stringMatching(/exited \(exit code 1\)/) },
    });
    expect(w.started.filter((d) => d === 'v2')).toHaveLength(2);
    expect(w.stopped.filter((d) => d === 'v1')).toEqual([]);
    await w.answers('hello v1');
    const p = w.r.persisted();
    expect(p?.failed_deployments).toEqual(['v2']);
    expect(p?.sets.map((s) => s.deployment_id)).toEqual(['v1']);

    // An agent that adopts the frame does not build or start v2 again.
    const left = w.r.detach();
    expect(left).toBeDefined();
    const next = await world({ v1: 'serves', v2: 'crashes' }, w.spec(2, 'v2').port);
    await next.runner().adopt(left!);
    await next.answers('hello v1');
    expect(next.built).toEqual([]);
    expect(next.started).toEqual(['v1', 'v1']);
  });

  it('never passing its health check: fails (start_timeout) and is stopped; v1 keeps serving', {
    timeout: 30_000,
  }, async () => {
    const w = await serving({ v2: 'silent' });
    await w.r.update(w.spec(2, 'v2'));
    await until('v2 unhealthy', async () => w.of('v2', ['unhealthy']).length > 0, 10_000);
    await until('v2 stopped', async () => w.stopped.filter((d) => d === 'v2').length === 2);
    // Failed, v2 is retired: nothing it says is reported any more (FrameRunner.hooks).
    await until(
      'v1 re-reported',
      async () => w.of('v1', ['healthy']).filter((e) => e.generation === 2).length === 2,
    );
    expect(w.of('v2', ['crashed', 'oom', 'unhealthy'])).toEqual([
      expect.objectContaining({
        detail: { reason: 'start_timeout', message: expect.stringMatching(/does not answer/) },
      }),
    ]);
    expect(w.of('v1', ['healthy']).filter((e) => e.generation === 2)).toHaveLength(2);
    expect(w.r.persisted()?.failed_deployments).toEqual(['v2']);
    await w.answers('hello v1');
  });

  it('that works takes over once healthy; the old one finishes its requests, then stops', {
    timeout: 30_000,
  }, async () => {
    const w = await serving({ v2: 'serves' });
    const slow = w.get('/slow', 10_000); // in flight on v1 when v2 takes over
    await waitFor('the slow request to reach v1', () => w.slowOn.includes('v1'));
    await w.r.update(w.spec(2, 'v2'));
    await w.answers('hello v2');
    expect(w.stopped.filter((d) => d === 'v1')).toEqual([]); // draining
    expect(await slow).toMatchObject({ status: 200, body: 'slow v1' });
    await until('v1 stopped', async () => w.stopped.filter((d) => d === 'v1').length === 2);
    expect(w.r.persisted()?.failed_deployments).toEqual([]);
  });
});

describe('a rollback or a restart (issue 36)', () => {
  it("runs the named release's build again: nothing built, it takes over, builds kept", {
    timeout: 30_000,
  }, async () => {
    const w = await serving({ v2: 'serves', v3: 'serves', v4: 'serves' });
    await w.r.update(w.spec(2, 'v2'));
    await w.answers('hello v2');
    // v3 rolls back to v1's build: no build, its replicas run v1's artifact.
    const artifacts: string[] = [];
    const start = w.runtime.start;
    w.runtime.start = (spec, onLine) => {
      artifacts.push(`${spec.deploymentId}:${spec.release.artifact}`);
      return start(spec, onLine);
    };
    await w.r.update({ ...w.spec(3, 'v3'), release_of: 'v1' });
    await w.answers('hello v3');
    expect(w.built).toEqual(['v1', 'v2']);
    expect(artifacts).toEqual(['v3:v1', 'v3:v1']);
    expect(w.r.persisted()?.kept_releases?.map((r) => r.deploymentId)).toEqual(['v1', 'v2']);
    // A build it no longer holds is built again.
    await w.r.update({ ...w.spec(4, 'v4'), release_of: 'gone' });
    await w.answers('hello v4');
    expect(w.built).toEqual(['v1', 'v2', 'v4']);
  });

  it('keeps the builds of as many releases as it is told (RELEASES_KEPT)', {
    timeout: 30_000,
  }, async () => {
    const w = await world({ v1: 'serves', v2: 'serves' }, await freePort());
    const r = w.runner(undefined, 1);
    await r.update(w.spec(1, 'v1'));
    await w.answers('hello v1');
    await r.update(w.spec(2, 'v2'));
    await w.answers('hello v2');
    await until(
      'v2 alone kept',
      async () =>
        r
          .persisted()
          ?.kept_releases?.map((k) => k.deploymentId)
          .join() === 'v2',
    );
  });
});

describe('a deploy under steady load', () => {
  it('fails no request: 8 keep-alive clients through the edge, from v1 to v2', {
    timeout: 30_000,
  }, async () => {
    const w = await serving({ v2: 'serves' });
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    cleanups.push(() => agent.destroy());
    const answers = new Map<string, number>();
    const failures: string[] = [];
    let going = true;
    const client = async () => {
      while (going) {
        const r = await hit(w.edge.info!.http_port, '/', HOSTNAME, 5000, agent);
        if ('error' in r || r.status !== 200) failures.push(JSON.stringify(r));
        else answers.set(r.body, (answers.get(r.body) ?? 0) + 1);
      }
    };
    const clients = Array.from({ length: 8 }, client);
    await until('load on v1', async () => (answers.get('hello v1') ?? 0) > 200);
    await w.r.update(w.spec(2, 'v2'));
    await until('v1 stopped', async () => w.stopped.filter((d) => d === 'v1').length === 2);
    const v2 = answers.get('hello v2') ?? 0;
    await until('load on v2 alone', async () => (answers.get('hello v2') ?? 0) > v2 + 200);
    going = false;
    await Promise.all(clients);
    expect(failures).toEqual([]);
    expect([...answers.keys()].sort()).toEqual(['hello v1', 'hello v2']);
  });
});

describe('a first deploy (nothing serves)', () => {
  it('crashing at start: restarts with delays, each crash reported for the back-off', {
    timeout: 30_000,
  }, async () => {
    const w = await world({ v1: 'crashes' }, await freePort());
    const r = w.runner();
    await r.update(w.spec(1, 'v1'));
    // Nothing healthy yet: the edge says the app is starting, and when to try again.
    const starting = await w.get();
    expect(isEdgePage(starting, 'starting')).toBe(true);
    expect(starting).toMatchObject({ status: 503, headers: { 'retry-after': '5' } });
    await until(
      'two crashes of replica 0',
      async () => w.of('v1', ['crashed']).filter((e) => e.replica === 0).length >= 2,
      10_000,
    );
    expect(w.started.filter((d) => d === 'v1').length).toBeGreaterThanOrEqual(4);
    expect(r.persisted()?.failed_deployments).toEqual([]);
    // A restart says what it follows (the service shows the frame Degraded, not Online, while
    // it comes up beside healthy ones); the first start says nothing.
    const zero = w.events.filter((e) => e.replica === 0);
    const firstCrash = zero.findIndex((e) => e.type === 'crashed');
    const starts = (from: number, to?: number) =>
      zero.slice(from, to).filter((e) => e.type === 'starting');
    expect(starts(0, firstCrash).length).toBeGreaterThan(0);
    expect(starts(0, firstCrash).every((e) => e.detail?.reason === undefined)).toBe(true);
    expect(starts(firstCrash).length).toBeGreaterThan(0);
    expect(starts(firstCrash).every((e) => e.detail?.reason === 'crash')).toBe(true);
  });
});

describe('scaling', () => {
  it('an added replica starts as new (no reason) and becomes healthy; a removed one stops', {
    timeout: 30_000,
  }, async () => {
    const w = await serving({});
    await w.r.update({ ...w.spec(2, 'v1'), replica_count: 3 });
    await until('replica 2 healthy', async () =>
      w.of('v1', ['healthy']).some((e) => e.replica === 2 && e.generation === 2),
    );
    const added = w.of('v1', ['starting']).filter((e) => e.replica === 2);
    expect(added).toHaveLength(1);
    expect(added[0]?.detail?.reason).toBeUndefined();
    await w.r.update({ ...w.spec(3, 'v1'), replica_count: 1 });
    await until('replicas 1 and 2 stopped', async () =>
      [1, 2].every((i) => w.of('v1', ['stopped']).some((e) => e.replica === i)),
    );
    await w.answers('hello v1');
  });
});

describe('the route at the edge', () => {
  it('stopped, the frame answers 503; started, it serves; removed, its host is unknown', {
    timeout: 30_000,
  }, async () => {
    const w = await serving({});
    await w.r.update({ ...w.spec(2, 'v1'), desired_state: 'stopped' });
    const stopped = await w.get();
    expect(stopped).toMatchObject({ status: 503 });
    expect(isEdgePage(stopped, 'stopped')).toBe(true);
    await w.r.update({ ...w.spec(3, 'v1'), desired_state: 'stopped', suspended: true });
    expect(isEdgePage(await w.get(), 'suspended')).toBe(true);
    await w.r.update(w.spec(4, 'v1'));
    await w.answers('hello v1');
    // A verified domain routes to it too, whatever its case and port.
    await w.r.update({ ...w.spec(4, 'v1'), domains: ['shop.example.test'] });
    const r = await hitFrame(w.edge.info!.http_port, 'SHOP.example.test.:8000');
    expect(r).toMatchObject({ status: 200, body: 'hello v1' });
    await w.r.remove();
    expect(isEdgePage(await w.get(), 'unknown_host')).toBe(true);
  });
});
