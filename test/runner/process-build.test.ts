// The process runtime's builds: fetched at the branch, the plan's steps run in the sandbox
// (no network but the agent's egress proxy, for the npm registry), the release reused once
// built, and a step that fails is a build failure (not a fetch failure) with its last lines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createProcessRuntime } from '../../src/runner/runtimes/process.ts';
import { BuildError, type BuildRequest } from '../../src/runner/runtimes/runtime.ts';
import { gitFixture } from './fixture.ts';
import { createServer } from 'node:http';
import { parseAllow } from '../../src/runner/egress-policy.ts';
import { FIRST_FRAME_UID } from '../../src/runner/runtimes/frame-uids.ts';

let tmp: string;
let repo: ReturnType<typeof gitFixture>;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'frameplane-process-build-'));
  repo = gitFixture(tmp);
});
const closers: Array<() => void> = [];
afterAll(() => {
  for (const c of closers) c();
  rmSync(tmp, { recursive: true, force: true });
});

const request = (deploymentId: string, lines: string[]): BuildRequest => ({
  frameId: 'frm_build',
  deploymentId,
  signal: new AbortController().signal,
  onLine: (l) => lines.push(l),
  onFetched: () => {},
  source: {
    gitBaseUrl: repo.gitBaseUrl,
    owner: 'acme',
    repo: 'app',
    branch: 'main',
    commitSha: null,
  },
});

describe('process runtime builds', () => {
  it('runs the build steps in the checkout, records the commit, and reuses the release', async () => {
    const sha = repo.pushFiles(
      {
        'package.json': JSON.stringify({
          name: 'b',
          private: true,
          scripts: { build: 'echo built as $(id -u) > built.txt', start: 'node server.js' },
        }),
        'server.js': 'setInterval(() => {}, 1000);',
      },
      'with a build step',
    );
    const agentData = join(tmp, 'agent');
    const runtime = createProcessRuntime({
      framesDir: join(agentData, 'frames'),
      volumesDir: join(agentData, 'volumes'),
      hide: [agentData],
      sandbox: true,
    });
    const lines: string[] = [];
    const release = await runtime.build(request('dep_one', lines));
    expect(release).toMatchObject({
      deploymentId: 'dep_one',
      command: 'npm start',
      commitSha: sha,
    });
    const built = readFileSync(join(release.artifact, 'built.txt'), 'utf8').trim();
    // As root, the frame's own uid (runtimes/frame-uids.ts), the first this agent gave.
    expect(built).toBe(
      process.getuid?.() === 0 ? `built as ${FIRST_FRAME_UID}` : `built as ${process.getuid?.()}`,
    );
    expect(lines).toContain('[frameplane] npm run build');
    expect(await runtime.reuse('frm_build', release)).toBe(true);
  });

  it('reports a failing step as build_failed with its last lines', async () => {
    repo.pushFiles(
      {
        'package.json': JSON.stringify({
          name: 'b',
          private: true,
          scripts: { build: 'echo nope >&2; exit 3', start: 'node server.js' },
        }),
      },
      'broken',
    );
    const agentData = join(tmp, 'agent2');
    const runtime = createProcessRuntime({
      framesDir: join(agentData, 'frames'),
      volumesDir: join(agentData, 'volumes'),
      hide: [agentData],
      sandbox: true,
    });
    const err = await runtime.build(request('dep_two', [])).catch((e) => e);
    expect(err).toBeInstanceOf(BuildError);
    expect(err.reason).toBe('build_failed');
    expect(err.message).toMatch(/nope/);
    expect(existsSync(join(agentData, 'frames', 'frm_build', 'dep_two'))).toBe(false);
  });

  it("reaches nothing of the host's loopback but what the operator allows, through the proxy", {
    timeout: 60_000,
  }, async () => {
    const host = await counting('host service');
    const mirror = await counting('mirror');
    const probe = String.raw`
const net = require('net'), http = require('http');
const proxy = new URL(process.env.HTTP_PROXY);
const direct = () => new Promise((done) => {
  const s = net.connect({ host: '127.0.0.1', port: ${host.port} });
  s.on('connect', () => { console.log('direct CONNECTED'); s.destroy(); done(); });
  s.on('error', (e) => { console.log('direct ' + e.code); done(); });
});
const viaProxy = (port) => new Promise((done) => {
  const r = http.get({ host: proxy.hostname, port: proxy.port, path: 'http://127.0.0.1:' + port + '/' }, (res) => {
    let b = ''; res.on('data', (d) => (b += d)); res.on('end', () => { console.log('proxy ' + port + ' ' + res.statusCode + ' ' + b.trim()); done(); });
  });
  r.on('error', (e) => { console.log('proxy ' + port + ' ' + e.code); done(); });
});
(async () => { await direct(); await viaProxy(${host.port}); await viaProxy(${mirror.port}); })();
`;
    repo.pushFiles(
      {
        'package.json': JSON.stringify({
          name: 'p',
          private: true,
          scripts: { build: 'node probe.js', start: 'node server.js' },
        }),
        'probe.js': probe,
      },
      'probes the network',
    );
    const agentData = join(tmp, 'agent3');
    const runtime = createProcessRuntime({
      framesDir: join(agentData, 'frames'),
      volumesDir: join(agentData, 'volumes'),
      hide: [agentData],
      sandbox: true,
      egressAllow: parseAllow(`127.0.0.1:${mirror.port}`),
    });
    const lines: string[] = [];
    await runtime.build(request('dep_three', lines));
    const said = lines.join('\n');
    expect(said).toMatch(/direct (ECONNREFUSED|ENETUNREACH)/);
    expect(said).toMatch(new RegExp(`proxy ${host.port} 403 Frameplane refused`));
    expect(said).toMatch(new RegExp(`proxy ${mirror.port} 200 hello from the mirror`));
    expect(host.accepted()).toBe(0);
    expect(mirror.accepted()).toBe(1);
  });
});

/** A loopback HTTP server of the host that counts who reached it. */
async function counting(name: string) {
  let accepted = 0;
  const server = createServer((_req, res) => res.end(`hello from the ${name}`));
  server.on('connection', () => accepted++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  closers.push(() => server.close());
  return { port: (server.address() as { port: number }).port, accepted: () => accepted };
}
