// Frames through the CLI, on a self-hosted agent that the test plays over the agent API (as the
// real agent does): create, deploy --wait until Online, --wait failing with exit 6, logs --follow.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOn, testApp, type TestApp } from '../helpers/app.ts';
import { newUser } from '../helpers/factories.ts';
import { framePath, replicaEvents, serveAt, sync, toldOf } from '../helpers/frames.ts';
import { gitHost } from '../helpers/webhooks.ts';
import { configHome, run, start, createWebFrame } from './run.ts';

let t: TestApp;
let server: string;
beforeAll(async () => {
  t = await testApp();
  server = await listenOn(t);
});
afterAll(() => t.close());

/** A user logged in through FRAMEPLANE_TOKEN, a project, its agent and a frame on it. */
async function world() {
  const ann = await newUser(t, 'ann');
  const env = {
    XDG_CONFIG_HOME: configHome(),
    FRAMEPLANE_SERVER: server,
    FRAMEPLANE_TOKEN: ann.token,
  };
  const project = (await run(['projects', 'create', 'Shop', '--json'], env)).stdout;
  const projectId = JSON.parse(project).id as string;
  const agent = await t.post(`/v2/projects/${projectId}/agents`, {
    token: ann.token,
    body: { name: 'box' },
  });
  expect(agent.status, agent.text).toBe(201);
  return { ann, env, projectId, agent: agent.json as { id: string; token: string } };
}

/** The agent's side: takes the desired state and reports every replica healthy. */
async function agentReportsHealthy(agentToken: string, frameId: string) {
  const state = await sync(t, agentToken);
  const desired = state.frames.find((f) => f.frame_id === frameId);
  if (!desired) return;
  await sync(t, agentToken, {
    events: replicaEvents(frameId, desired.replica_count, 'healthy', {
      generation: desired.generation,
    }),
  });
}

describe('frames', () => {
  it('creates a frame on an agent, deploys with --wait to Online, follows logs', async () => {
    const { env, agent } = await world();
    const created = await run([...createWebFrame(agent.id), '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const frame = JSON.parse(created.stdout);
    expect(frame).toMatchObject({ name: 'web', agent_id: agent.id, status: 'Starting' });
    await agentReportsHealthy(agent.token, frame.id);
    const listed = await run(['frames', 'list', '-p', 'Shop'], env);
    expect(listed.stdout).toMatch(/^ID\s+NAME\s+STATUS/m);
    expect(listed.stdout).toMatch(new RegExp(`${frame.id}\\s+web\\s+Online`));

    const deploy = start(['frames', 'deploy', 'web', '-p', 'Shop', '--wait', '--json'], env);
    // Until the agent reports the new generation healthy, the deployment is in progress: the
    // CLI has deployed and shows a status that is not final, and waits on.
    await deploy.waitForStderr(/^web: /m);
    expect(deploy.child.exitCode).toBeNull();
    await agentReportsHealthy(agent.token, frame.id);
    const done = await deploy.ended();
    expect(done.code, done.stderr).toBe(0);
    const final = JSON.parse(done.stdout); // --json: stdout is the frame and nothing else
    expect(final).toMatchObject({ status: 'Online', latest_deployment: { status: 'succeeded' } });
    expect(done.stderr).toContain('web: Starting');
    expect(done.stderr).toMatch(/web: Online\n$/);

    const logs = start(['frames', 'logs', 'web', '-p', 'Shop', '--follow'], env);
    const line = (text: string) => ({
      frame_id: frame.id,
      replica: 0,
      at: new Date().toISOString(),
      line: text,
    });
    await sync(t, agent.token, { logs: [line('listening on 8080')] });
    await logs.waitForOutput(/\[0\] listening on 8080$/m);
    await sync(t, agent.token, { logs: [line('GET / 200')] });
    await logs.waitForOutput(/\[0\] GET \/ 200$/m);
    logs.child.kill('SIGINT');
    expect((await logs.done).code).toBe(0);
  });

  it('exits 6 when a waited-for deployment ends Stopped', async () => {
    const { ann, env, agent } = await world();
    const created = await run(
      [
        'frames',
        'create',
        '-p',
        'Shop',
        '--name',
        'api',
        '--repo',
        'acme/api',
        '--port',
        '8080',
        '--agent',
        agent.id,
        '--json',
      ],
      env,
    );
    const frame = JSON.parse(created.stdout);
    await sync(t, agent.token); // the agent is online: a stop goes to it
    const deploy = start(['frames', 'deploy', 'api', '-p', 'Shop', '--wait'], env);
    await deploy.waitForStderr(/^api: /m); // deployed, and waiting
    const stop = await t.post(`${framePath(frame)}/stop`, { token: ann.token });
    expect(stop.status, stop.text).toBe(202);
    const done = await deploy.ended();
    expect(done.code, done.stderr).toBe(6);
    expect(done.stderr).toMatch(/api: Stopped\n$/);
    expect(done.stdout).toBe('');

    const timeout = await run(
      ['frames', 'start', 'api', '-p', 'Shop', '--wait', '--timeout', '1'],
      env,
    );
    expect(timeout.code, timeout.stderr).toBe(7);
  });

  it('lists deployments, rolls back and restarts without a build', async () => {
    const { env, agent } = await world();
    const created = await run([...createWebFrame(agent.id), '--json'], env);
    const frame = JSON.parse(created.stdout);
    const told = () => toldOf(t, agent.token, frame.id);
    const serve = async (sha: string) =>
      (await serveAt(t, agent.token, frame.id, sha)).deployment_id as string;
    const first = await serve('a'.repeat(40));
    expect((await run(['frames', 'deploy', 'web', '-p', 'Shop'], env)).code).toBe(0);
    const second = await serve('b'.repeat(40));
    const listed = await run(['frames', 'deployments', 'list', 'web', '-p', 'Shop'], env);
    expect(listed.stdout).toMatch(
      /^ID\s+TRIGGER\s+STATUS\s+COMMIT\s+BUILD OF\s+CREATED\s+CHANGES/m,
    );
    expect(listed.stdout).toMatch(new RegExp(`${first}\\s+create\\s+succeeded\\s+a{12}`));
    expect(listed.stdout).toMatch(new RegExp(`${second}\\s+manual.*a{7}→b{7}`));
    expect(listed.stdout).toContain('first release');

    const back = await run(['frames', 'rollback', 'web', first, '-p', 'Shop', '--json'], env);
    expect(back.code, back.stderr).toBe(0);
    expect(await told()).toMatchObject({ release_of: first, commit_sha: 'a'.repeat(40) });
    // The rollback paused push deploys; the frame says so, and they can be resumed.
    const shown = await run(['frames', 'show', 'web', '-p', 'Shop'], env);
    expect(shown.stdout).toMatch(/push deploys:\s+paused since .*\(frames push-deploys on\)/i);
    const on = await run(['frames', 'push-deploys', 'web', 'on', '-p', 'Shop', '--json'], env);
    expect(on.code, on.stderr).toBe(0);
    expect(JSON.parse(on.stdout).push_deploys.enabled).toBe(true);
    // Until the rollback serves, a restart is of what serves: the second release.
    const restart = await run(['frames', 'restart', 'web', '-p', 'Shop', '--json'], env);
    expect(restart.code, restart.stderr).toBe(0);
    expect(await told()).toMatchObject({ release_of: second, commit_sha: 'b'.repeat(40) });
  });

  // Retried once: in some hundred runs the CLI waited on twice, not yet understood (see the
  // catch below). What the service held then goes to the log even when the retry passes.
  it('says why a waited-for deploy failed, with the last log lines', { retry: 1 }, async () => {
    const { env, agent, ann } = await world();
    const created = await run([...createWebFrame(agent.id), '--json'], env);
    const frame = JSON.parse(created.stdout);
    await serveAt(t, agent.token, frame.id, 'a'.repeat(40));
    const deploy = start(['frames', 'deploy', 'web', '-p', 'Shop', '--wait'], env);
    await deploy.waitForStderr(/^web: /m); // deployed, and waiting
    const d = await toldOf(t, agent.token, frame.id);
    const at = new Date().toISOString();
    await sync(t, agent.token, {
      logs: [
        { frame_id: frame.id, replica: 0, at, line: '> build' },
        { frame_id: frame.id, replica: 0, at, line: 'src/app.ts(3,1): error TS1005' },
      ],
      builds: [
        { deployment_id: d.deployment_id, state: 'failed', message: 'npm run build exited 2' },
      ],
    });
    const done = await deploy.ended().catch(async (err: Error) => {
      const read = async (p: string) => (await t.get(p, { token: ann.token })).text;
      const path = framePath(frame);
      const held = [await read(path), await read(`${path}/deployments`)].join('\n');
      const said = `${err.message}\ntold: ${JSON.stringify(d)}\nservice: ${held}`;
      console.error(`[the CLI waited on] ${said}`);
      throw new Error(said);
    });
    expect(done.code, done.stderr).toBe(6);
    expect(done.stderr).toContain(`deployment ${d.deployment_id} failed: build_failed`);
    expect(done.stderr).toContain('npm run build exited 2');
    // The build's lines came as they were logged, before the verdict.
    expect(done.stderr).toMatch(
      / {2}> build\n {2}src\/app\.ts\(3,1\): error TS1005\n(.*\n)*.*failed/,
    );
  });

  it('sets env as a release with --deploy, and shows what a release changed', async () => {
    const { env, agent } = await world();
    const created = await run([...createWebFrame(agent.id), '--json'], env);
    const frame = JSON.parse(created.stdout);
    const first = (await serveAt(t, agent.token, frame.id, 'a'.repeat(40))).deployment_id;
    const set = await run(
      ['frames', 'env', 'set', 'web', 'MODE=fast', '--deploy', '-p', 'Shop'],
      env,
    );
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toMatch(/web: released as dep_\w+/);
    const told = await toldOf(t, agent.token, frame.id);
    expect(told).toMatchObject({ release_of: first, env: { MODE: 'fast' } });
    await serveAt(t, agent.token, frame.id, 'a'.repeat(40));
    const show = await run(
      ['frames', 'deployments', 'show', 'web', told.deployment_id, '-p', 'Shop'],
      env,
    );
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/trigger:\s+config/);
    expect(show.stdout).toMatch(/changes:\s+env \+MODE/);
    expect(show.stdout).toContain('  + MODE "fast"');
    const help = await run(['frames', 'env', 'set', '--help'], env);
    expect(help.stdout).toContain('--deploy');
    expect(help.stdout).not.toMatch(/re-?roll/);
  });

  it('turns previews on, lists the preview a push made, and shows what it previews', async () => {
    const { env, agent, projectId, ann } = await world();
    const created = await run([...createWebFrame(agent.id), '--json'], env);
    const frame = JSON.parse(created.stdout);
    const set = await run(
      [
        'frames',
        'previews',
        'set',
        'web',
        '--on',
        '--ttl-days',
        '2',
        '--env',
        'MODE=preview',
        '-p',
        'Shop',
      ],
      env,
    );
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/previews:\s+on, 2 days without a push/);
    const hook = await (await gitHost(t, ann.token, projectId)).push('feature/x', 'c'.repeat(40));
    const preview = hook.previews[0].frame_id;
    const listed = await run(['frames', 'previews', 'list', 'web', '-p', 'Shop'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^ID\s+BRANCH\s+PULL REQUEST\s+STATUS\s+URL\s+EXPIRES/m);
    expect(listed.stdout).toMatch(new RegExp(`${preview}\\s+feature/x\\s`));
    const shown = await run(['frames', 'show', preview, '-p', 'Shop'], env);
    expect(shown.stdout).toMatch(new RegExp(`preview of:\\s+${frame.id} \\(feature/x\\)`));
    const bad = await run(['frames', 'previews', 'set', 'web', '--on', '--off', '-p', 'Shop'], env);
    expect(bad.code).toBe(2);
  });
});
