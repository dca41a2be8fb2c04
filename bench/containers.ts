// `npm run bench:containers`: the figures of docs/operations.md for frames in containers, on a
// real Docker Engine (our own dockerd, as the container tests start it, unless DOCKER_HOST
// answers): create → Online of a frame (fetch, image build, start, health), a deploy of the
// same commit (image reused), and the agent's memory with 0 and with N frames running.
// Usage: npm run bench:containers -- [--frames=100] [--runtime=docker|swarm]
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureNodeBaseImage, ensureSwarm, startDocker } from '../test/containers/docker.ts';
import { http, startInstance, until } from '../test/faults/helpers/service.ts';
import { gitFixture } from '../test/runner/fixture.ts';
import { freePort } from '../test/helpers/smtp.ts';

const { values } = parseArgs({
  options: {
    frames: { type: 'string', default: '100' },
    runtime: { type: 'string', default: 'docker' },
  },
});
const FRAMES = Number(values.frames);
const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const docker = await startDocker();
const root = mkdtempSync(join(tmpdir(), 'frameplane-bench-containers-'));
chmodSync(root, 0o711); // as root, the embedded PostgreSQL runs as `postgres`, who must pass through
try {
  if (values.runtime === 'swarm') await ensureSwarm(docker.host);
  const image = await ensureNodeBaseImage(docker.host);
  const repo = gitFixture(root);
  repo.pushFiles(
    {
      'package.json': JSON.stringify({
        name: 'demo',
        private: true,
        scripts: { start: 'node server.js' },
      }),
      'server.js': `require('http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT));`,
    },
    'app',
  );
  const service = await startInstance(
    'bench',
    { DATA_DIR: join(root, 'data'), DATABASE_URL: '', LOG_LEVEL: 'warn' },
    60_000,
  );
  const base = service.base;
  const signup = await http(base, 'POST', '/v2/auth/signup', {
    body: { email: 'bench@example.test', password: 'a-long-password' },
  });
  const token = signup.json.access_token as string;
  const project = await http(base, 'POST', '/v2/projects', { token, body: { name: 'bench' } });
  const space = (await http(base, 'GET', `/v2/projects/${project.json.id}/spaces`, { token })).json
    .data[0].id;
  const reg = await http(base, 'POST', `/v2/projects/${project.json.id}/agents`, {
    token,
    body: { name: 'bench' },
  });
  const agent = spawn(
    process.execPath,
    [
      'bin/frameplane.mjs',
      'agent',
      '--server',
      base,
      '--data',
      join(root, 'agent'),
      '--runtime',
      values.runtime!,
    ],
    {
      env: {
        ...process.env,
        DOCKER_HOST: docker.host,
        FRAME_BASE_IMAGE: image,
        FRAMEPLANE_AGENT_TOKEN: reg.json.token,
        GIT_BASE_URL: repo.gitBaseUrl,
        FRAME_MEMORY_MB: '48',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  await new Promise((r) => setTimeout(r, 2000));
  const idle = rssMb(agent.pid!);
  const frames = `/v2/projects/${project.json.id}/spaces/${space}/frames`;
  const online = (path: string, test: (f: any) => boolean = () => true) =>
    until(
      `Online ${path}`,
      () => http(base, 'GET', `${path}?wait_for=Online&timeout=10`, { token, timeoutMs: 15_000 }),
      (r) => r.json?.status === 'Online' && test(r.json),
      600_000,
      200,
    );
  const create = async (i: number) => {
    const r = await http(base, 'POST', frames, {
      token,
      body: {
        name: `f${i}`,
        owner_id: signup.json.user.id,
        git_repository: 'app',
        git_repository_owner: 'acme',
        git_repository_branch: 'main',
        port: await freePort(),
        agent_id: reg.json.id,
      },
    });
    return `${frames}/${r.json.id}`;
  };

  let t = Date.now();
  const first = await create(0);
  await online(first);
  const createOnline = Date.now() - t;
  t = Date.now();
  await http(base, 'POST', `${first}/deploy`, { token, body: {} });
  await online(first, (f) => f.latest_deployment?.status === 'succeeded');
  const cachedDeploy = Date.now() - t;

  t = Date.now();
  const paths = [first];
  for (let i = 1; i < FRAMES; i++) paths.push(await create(i));
  for (const p of paths) await online(p);
  const allOnline = Date.now() - t;
  await new Promise((r) => setTimeout(r, 5000));
  const loaded = rssMb(agent.pid!);

  console.log(`runtime ${values.runtime}, base image ${image}, 2 cores`);
  console.log(`create -> Online (fetch, build, start, health): ${secs(createOnline)}`);
  console.log(`deploy of the same commit (image reused) -> succeeded: ${secs(cachedDeploy)}`);
  console.log(
    `${FRAMES} frames Online (each its own image, from the layer cache): ${secs(allOnline)}`,
  );
  console.log(
    `agent RSS: ${idle.toFixed(0)} MB idle, ${loaded.toFixed(0)} MB with ${FRAMES} frames` +
      ` (${(((loaded - idle) / FRAMES) * 100).toFixed(0)} MB per 100 frames)`,
  );
  agent.kill('SIGTERM');
  await new Promise((r) => agent.once('exit', r));
  await service.kill('SIGTERM');
} finally {
  // What the agent left running (it leaves frames for adoption) goes with the daemon.
  await docker.stop();
  rmSync(root, { recursive: true, force: true });
}
