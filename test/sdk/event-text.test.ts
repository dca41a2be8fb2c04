// The words of a frame's events (src/cli/event-text.ts), one row per kind the service records
// (src/frames/frame-events.ts and the areas that call it) and per detail that changes them.
import { describe, expect, it } from 'vitest';
import { eventText, statusText } from '../../src/sdk/event-text.ts';

const ev = (
  type: string,
  detail: unknown = null,
  status: string | null = null,
  status_reason: string | null = null,
) => ({ type, detail, status, status_reason });
const sha = '3f2a1c4e5d6b7a8f9e0d1c2b3a4f5e6d7c8b9a0f';

describe('eventText', () => {
  it.each([
    [ev('created'), 'created'],
    [
      ev('created', { preview_of: 'frm_1', branch: 'feat' }),
      'created as the preview of branch feat',
    ],
    [ev('updated', { port: 81, replica_count: 2 }), 'settings changed: port, replica count'],
    [ev('updated', {}), 'settings saved, unchanged'],
    [ev('start', { noop: false }), 'start asked'],
    [ev('start', { noop: true }), 'start asked (it was running already)'],
    [ev('stop', { noop: false }), 'stop asked'],
    [ev('stop', { noop: true }), 'stop asked (it was stopped already)'],
    [ev('deploy', { deployment_id: 'dep_1', trigger: 'manual' }), 'deploy started (manual)'],
    [
      ev('deploy', { deployment_id: 'dep_1', trigger: 'push', commit_sha: sha }),
      'deploy of 3f2a1c4 started (push)',
    ],
    [
      ev('deploy', { deployment_id: 'dep_1', trigger: 'rollback', release_of: 'dep_0' }),
      'deploy started (a rollback)',
    ],
    [ev('status', { from: 'Starting' }, 'Online'), 'Starting → Online'],
    [ev('status', { from: 'Online' }, 'Error', 'crash'), 'Online → Error (crashed)'],
    [ev('status', { from: 'Online' }, 'Stopped', 'stopping'), 'Online → Stopping…'],
    [ev('status', { from: null }, 'Starting'), 'Starting'],
    [ev('status', { from: 'Stopped' }, 'Stopped'), 'Stopped'],
    [ev('replica', { replica: 1, state: 'crashed', exit_code: 1 }), 'replica 1 crashed (exit 1)'],
    [
      ev('replica', { replica: 0, state: 'crashed', signal: 'SIGKILL', exit_code: null }),
      'replica 0 crashed (signal SIGKILL)',
    ],
    [ev('replica', { replica: 0, state: 'crashed' }), 'replica 0 crashed'],
    [
      ev('replica', { replica: 2, state: 'oom', exit_code: 137 }),
      'replica 2 ran out of memory (exit 137)',
    ],
    [ev('replica', { replica: 0, state: 'unhealthy' }), 'replica 0 failed its health check'],
    [
      ev('replica', { replica: 0, state: 'unhealthy', reason: 'start_timeout' }),
      'replica 0 did not pass its health check in time',
    ],
    [ev('replica', { replica: 2, state: 'healthy' }), 'replica 2 healthy'],
    [
      ev('build_failed', { deployment_id: 'dep_1', commit_sha: sha, message: 'npm ci failed' }),
      'build of 3f2a1c4 failed: npm ci failed',
    ],
    [
      ev('build_failed', { deployment_id: 'dep_1', commit_sha: null, message: null }),
      'build failed',
    ],
    [
      ev('backoff_tripped', { crash_streak: 5 }, null, 'backoff_tripped'),
      'stopped after 5 crashes in a row; start it again once fixed',
    ],
    [
      ev('backoff_tripped', { cause: 'image_pull_timeout', pulling_since: 'x' }),
      'stopped: the image pull took too long',
    ],
    [
      ev('push_skipped', { commit_sha: sha, reason: 'push_deploys_paused' }),
      'push of 3f2a1c4 not deployed: push deploys are paused',
    ],
    [
      ev('preview_created', { branch: 'feat', frame_id: 'frm_2' }),
      'preview of branch feat created',
    ],
    [
      ev('preview_deleted', { frame_id: 'frm_2', branch: 'feat', reason: 'branch_deleted' }),
      'preview of branch feat removed (branch deleted)',
    ],
    [ev('env_changed', { set: ['A', 'B'], deleted: ['C'] }), 'env changed (set A, B, removed C)'],
    [ev('env_changed', { set: [], deleted: ['C'] }), 'env changed (removed C)'],
    [ev('suspended', { billing_status: 'past_due' }), 'suspended: billing is past due'],
    [ev('restored', { billing_status: 'active' }), 'restored: billing is settled'],
    [
      ev('domain_added', { domain_id: 'dom_1', hostname: 'shop.example' }),
      'domain shop.example added',
    ],
    [
      ev('domain_verified', { domain_id: 'dom_1', hostname: 'shop.example' }),
      'domain shop.example verified',
    ],
    [
      ev('domain_removed', { domain_id: 'dom_1', hostname: 'shop.example' }),
      'domain shop.example removed',
    ],
    [
      ev('domain_released', { hostname: 'shop.example', reason: 'verified_by_another_frame' }),
      'domain shop.example released: another frame verified it',
    ],
    [
      ev('volume_added', { volume_id: 'vol_1', name: 'data', mount_path: '/data', size_gb: 5 }),
      'volume data at /data, 5 GB added',
    ],
    [
      ev('volume_removed', { volume_id: 'vol_1', name: 'data', mount_path: '/data', size_gb: 5 }),
      'volume data at /data, 5 GB removed',
    ],
    [ev('something_new', { x: 1 }), 'something_new'],
  ])('%j', (event, words) => {
    expect(eventText(event)).toBe(words);
  });

  it('names the deployment with -v', () => {
    const e = ev('deploy', { deployment_id: 'dep_9', trigger: 'push', commit_sha: sha });
    expect(eventText(e, true)).toBe('deploy of 3f2a1c4 started (push, dep_9)');
  });
});

describe('statusText', () => {
  it.each([
    ['Stopped', 'stopping', 'Stopping…'],
    ['Stopped', null, 'Stopped'],
    ['Stopped', 'backoff_tripped', 'Stopped (crashed too often)'],
    ['Error', 'health_check_failed', 'Error (health check failed)'],
    ['Error', 'clone_failed', 'Error (clone failed)'],
    ['Suspended', 'billing_past_due', 'Suspended (billing past due)'],
    ['Degraded', 'some_new_reason', 'Degraded (some new reason)'],
    ['Online', null, 'Online'],
  ])('%s %s', (status, reason, words) => {
    expect(statusText(status, reason)).toBe(words);
  });
});
