// A tenant and a self-hosted agent of theirs, as a child process on a chosen runtime: what the
// end-to-end tests of the whole-frame runtimes (test/containers/swarm-runtime.test.ts,
// test/kubernetes/runtime.test.ts) start from. The agent's output is kept (its last lines) for
// the messages of failed waits; `stop` ends every agent started.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestApp } from '../helpers/app.ts';
import { newProject, newUser } from '../helpers/factories.ts';
import { defaultSpace } from '../helpers/frames.ts';
import { freePort } from '../../src/runner/processes.ts';
import { hitFrame, until } from './fixture.ts';

const BIN = fileURLToPath(new URL('../../bin/frameplane.mjs', import.meta.url));

export function agentWorlds(o: {
  t: () => TestApp;
  runtime: string;
  dataDir: () => string;
  gitBaseUrl: () => string;
}) {
  const agents: ChildProcess[] = [];
  let output: string[] = [];
  const context = () => `agent output (last lines):\n${output.join('\n')}`;

  /** A user, a project, and an agent of that project with extra env. */
  async function world(env: Record<string, string> = {}) {
    const t = o.t();
    const ann = await newUser(t, `ann${agents.length}`);
    const project = await newProject(t, ann);
    const space = await defaultSpace(t, ann, project.id);
    const reg = await t.post(`/v2/projects/${project.id}/agents`, {
      token: ann.token,
      body: { name: o.runtime },
    });
    const server = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
    const edgePort = await freePort();
    const data = join(o.dataDir(), `agent${agents.length}`);
    const args = ['agent', '--server', server, '--data', data, '--runtime', o.runtime];
    const agent = spawn(process.execPath, [BIN, ...args, '--edge-port', String(edgePort)], {
      env: {
        ...process.env,
        FRAMEPLANE_AGENT_TOKEN: reg.json.token,
        GIT_BASE_URL: o.gitBaseUrl(),
        FRAME_MEMORY_MB: '128',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    agents.push(agent);
    for (const s of [agent.stdout!, agent.stderr!]) {
      s.on('data', (d: Buffer) => {
        output = [...output, ...d.toString().split('\n').filter(Boolean)].slice(-80);
      });
    }
    /** The frame once Online (and `test` holds); a timeout says what the frame and its log say. */
    const online = (path: string, test: (f: any) => boolean = () => true) =>
      until(
        'Online',
        async () => {
          const f = (await t.get(`${path}?wait_for=Online&timeout=10`, { token: ann.token })).json;
          return f.status === 'Online' && test(f) ? f : undefined;
        },
        180_000,
        context,
      ).catch(async (err) => {
        const logs = (await t.get(`${path}/logs?limit=100`, { token: ann.token })).json.data
          .map((l: any) => l.line)
          .join('\n');
        const f = (await t.get(path, { token: ann.token })).json;
        throw new Error(`${(err as Error).message}\nframe: ${JSON.stringify(f)}\nlogs:\n${logs}`);
      });
    /** One GET to a frame through this agent's edge. */
    const get = (frame: { hostname: string }) => hitFrame(edgePort, frame.hostname);
    return { ann, project, space, agentId: reg.json.id as string, online, get };
  }

  /** Ends every agent started (SIGTERM: frames are left running, as on any agent's exit). */
  const stop = () =>
    Promise.all(
      agents
        .filter((a) => a.exitCode === null)
        .map((a) => {
          a.kill('SIGTERM');
          return new Promise((r) => a.once('exit', r));
        }),
    );

  return { world, context, stop };
}
