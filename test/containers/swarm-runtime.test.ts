// The swarm runtime end to end (issue 11): the agent as a child process with --runtime swarm on
// a real single-node Docker Swarm. A frame of two replicas is a service of two tasks, confined
// and rolled out as documented; killing one task's container leaves the other serving while
// swarm replaces it, and the frame comes back Online; a broken build keeps the service as it was.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newProject, newUser } from '../helpers/factories.ts';
import { defaultSpace, framePath, newFrame } from '../helpers/frames.ts';
import { freePort } from '../../src/runner/processes.ts';
import { dockerClient } from '../../src/runner/runtimes/docker.ts';
import { serviceName } from '../../src/runner/runtimes/swarm-service.ts';
import { gitFixture, hit, until } from '../runner/fixture.ts';

const BIN = fileURLToPath(new URL('../../bin/frameplane.mjs', import.meta.url));
const docker = dockerClient();
let t: TestApp;
let tmp: string;
let repo: ReturnType<typeof gitFixture>;
let agent: ChildProcess | undefined;
let output: string[] = [];
const context = () => `agent output (last lines):\n${output.join('\n')}`;

const app = (version: string) => ({
  'package.json': JSON.stringify({ name: 'demo', private: true, scripts: { start: 'node server.js' } }),
  'server.js': `require('http').createServer((q, s) => s.end('hello ${version} from ' + require('os').hostname()))
    .listen(Number(process.env.PORT), () => console.log('app ${version} up'));`,
});

beforeAll(async () => {
  t = await testApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  tmp = mkdtempSync(join(tmpdir(), 'frameplane-swarm-e2e-'));
  repo = gitFixture(tmp);
});

afterAll(async () => {
  if (agent && agent.exitCode === null) {
    agent.kill('SIGTERM');
    await new Promise((r) => agent!.once('exit', r));
  }
  const left = await docker.listServices({ filters: JSON.stringify({ label: ['frameplane.frame'] }) });
  await Promise.all(left.map((s) => docker.getService(s.ID).remove().catch(() => {})));
  await t?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the swarm runtime', () => {
  it('runs two replicas as a service, survives the kill of one task, and keeps serving through a broken build', { timeout: 300_000 }, async () => {
    repo.pushFiles(app('v1'), 'v1');
    const ann = await newUser(t, 'ann');
    const project = await newProject(t, ann);
    const space = await defaultSpace(t, ann, project.id);
    const reg = await t.post(`/v2/projects/${project.id}/agents`, { token: ann.token, body: { name: 'swarm' } });
    const server = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
    agent = spawn(process.execPath, [BIN, 'agent', '--server', server, '--data', join(tmp, 'agent'), '--runtime', 'swarm'], {
      env: { ...process.env, FRAMEPLANE_AGENT_TOKEN: reg.json.token, GIT_BASE_URL: repo.gitBaseUrl, FRAME_MEMORY_MB: '128' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const s of [agent.stdout!, agent.stderr!]) {
      s.on('data', (d: Buffer) => { output = [...output, ...d.toString().split('\n').filter(Boolean)].slice(-60); });
    }
    const port = await freePort();
    const frame = await newFrame(t, ann, project.id, space, { agent_id: reg.json.id, port, replica_count: 2, git_repository: 'app', git_repository_owner: 'acme' });
    const path = framePath(frame);
    const online = (test: (f: any) => boolean = () => true) => until('Online', async () => {
      const f = (await t.get(`${path}?wait_for=Online&timeout=10`, { token: ann.token })).json;
      return f.status === 'Online' && test(f) ? f : undefined;
    }, 180_000, context);
    await online((f) => f.latest_deployment?.status === 'succeeded');

    // One service of two tasks, confined and rolled out as documented.
    const [svc] = await docker.listServices({ filters: JSON.stringify({ name: [serviceName(frame.id)] }) });
    const spec = svc!.Spec as any;
    expect(spec.Mode.Replicated.Replicas).toBe(2);
    expect(spec.UpdateConfig).toMatchObject({ FailureAction: 'rollback', Order: 'start-first' });
    expect(spec.TaskTemplate.ContainerSpec).toMatchObject({ User: '1000:1000', CapabilityDrop: ['ALL'] });
    expect(spec.TaskTemplate.Resources.Limits.MemoryBytes).toBe(128 * 1024 * 1024);
    const bodies = new Set<string>();
    for (let i = 0; i < 12; i++) { const r = await hit(port); if ('body' in r) bodies.add(r.body); }
    expect(bodies.size).toBe(2);

    // Kill one task's container: the other keeps serving; swarm replaces it; the frame is Online again.
    const running = await docker.listContainers({ filters: JSON.stringify({ label: [`frameplane.frame=${frame.id}`], status: ['running'] }) });
    expect(running).toHaveLength(2);
    await docker.getContainer(running[0]!.Id).kill();
    let served = 0;
    for (let i = 0; i < 20; i++) { const r = await hit(port); if ('body' in r && r.status === 200) served++; await new Promise((r) => setTimeout(r, 100)); }
    expect(served).toBeGreaterThanOrEqual(15);
    const events = await until('a crash reported', async () => {
      const e = (await t.get(`${path}/events?limit=100`, { token: ann.token })).json.data as any[];
      return e.some((x) => x.type === 'replica' && ['crashed', 'oom'].includes(x.detail?.state)) ? e : undefined;
    }, 60_000, context);
    expect(events.length).toBeGreaterThan(0);
    await online((f) => f.replicas.filter((r: any) => r.state === 'healthy').length === 2);
    await until('two tasks again', async () => (await docker.listContainers({
      filters: JSON.stringify({ label: [`frameplane.frame=${frame.id}`], status: ['running'] }),
    })).length === 2, 60_000, context);

    // A broken build: the deployment fails, the service keeps its tasks, the frame stays Online.
    repo.pushFiles({ 'package.json': JSON.stringify({ name: 'demo', private: true, scripts: { start: 'node server.js', build: 'exit 2' } }) }, 'broken');
    expect((await t.post(`${path}/deploy`, { token: ann.token, body: {} })).status).toBe(202);
    const kept = await online((f) => f.latest_deployment?.status === 'failed');
    expect(kept.latest_deployment.failure_reason).toBe('build_failed');
    expect(await hit(port)).toMatchObject({ status: 200 });
  });
});
