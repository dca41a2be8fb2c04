// Signed deliveries to a project's git webhook, as a GitHub-style host sends them: the project's
// secret read as its admin, X-Hub-Signature-256 over the exact body, the repository acme/app.
import { createHmac } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';

export const signature = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** push(branch, sha) and pr(action, number, branch, sha, fork?), each expecting 202. */
export async function gitHost(t: TestApp, adminToken: string, projectId: string) {
  const hook = await t.get(`/v2/projects/${projectId}/webhook`, { token: adminToken });
  expect(hook.status, hook.text).toBe(200);
  const secret = hook.json.secret as string;
  const deliver = async (event: string, payload: Record<string, unknown>) => {
    const body = JSON.stringify({
      repository: { name: 'app', owner: { login: 'acme' } },
      ...payload,
    });
    const r = await t.post(`/v2/hooks/git?project=${projectId}`, {
      raw: body,
      headers: {
        'content-type': 'application/json',
        'x-github-event': event,
        'x-hub-signature-256': signature(secret, body),
      },
    });
    expect(r.status, r.text).toBe(202);
    return r.json;
  };
  return {
    push: (branch: string, sha: string, deleted = false) =>
      deliver('push', { ref: `refs/heads/${branch}`, after: sha, deleted }),
    pr: (action: string, number: number, branch: string, sha: string, fork = false) =>
      deliver('pull_request', {
        action,
        number,
        pull_request: {
          head: { ref: branch, sha, repo: { full_name: fork ? 'mallory/app' : 'acme/app' } },
          base: { ref: 'main', repo: { full_name: 'acme/app' } },
        },
      }),
  };
}
