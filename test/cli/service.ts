// The service the CLI tests talk to: one per test file, on a real socket (the CLI is another
// process), and the world most of them start from.
import { afterAll, beforeAll, expect } from 'vitest';
import { listenOn, testApp, type TestApp } from '../helpers/app.ts';
import { newUser } from '../helpers/factories.ts';
import { runJson, userEnv } from './run.ts';

/** This file's service: `t` and its URL `server`, set before the tests run, closed after. */
export function serviceForFile() {
  const s = { t: undefined as unknown as TestApp, server: '' };
  beforeAll(async () => {
    s.t = await testApp();
    s.server = await listenOn(s.t);
  });
  afterAll(() => s.t.close());
  return s;
}

/** A new user logged in through FRAMEPLANE_TOKEN, with project Shop and a self-hosted agent. */
export async function shopWorld(t: TestApp, server: string) {
  const ann = await newUser(t, 'ann');
  const env = userEnv(server, ann.token);
  const project = await runJson(['projects', 'create', 'Shop'], env);
  const agent = await t.post(`/v2/projects/${project.id}/agents`, {
    token: ann.token,
    body: { name: 'box' },
  });
  expect(agent.status, agent.text).toBe(201);
  return { ann, env, project, agent: agent.json as { id: string; token: string } };
}
