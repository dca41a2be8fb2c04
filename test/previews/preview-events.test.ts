// What a delivery asks of frames (src/previews/preview-events.ts), case by case.
import { describe, expect, it } from 'vitest';
import { hookEventOf, previewExpiry, previewName } from '../../src/previews/preview-events.ts';

const sha = 'a'.repeat(40);
const pr = (action: string, head = 'acme/app', extra: Record<string, unknown> = {}) => ({
  action,
  number: 7,
  pull_request: {
    head: { ref: 'fix', sha, repo: { full_name: head } },
    base: { ref: 'main', repo: { full_name: 'Acme/App' } },
  },
  ...extra,
});

describe('hookEventOf', () => {
  it.each([
    [
      'a push',
      'push',
      { ref: 'refs/heads/main', after: sha },
      { kind: 'push', branch: 'main', commit: sha },
    ],
    [
      'a push without the event header',
      undefined,
      { ref: 'refs/heads/a/b', after: 'xyz' },
      { kind: 'push', branch: 'a/b', commit: null },
    ],
    [
      'a deleted branch',
      'push',
      { ref: 'refs/heads/x', deleted: true },
      { kind: 'branch_deleted', branch: 'x' },
    ],
    ['a tag', 'push', { ref: 'refs/tags/v1', after: sha }, undefined],
    ['a ping', 'ping', { zen: 'hi' }, undefined],
    ['another event', 'create', { ref: 'refs/heads/x' }, undefined],
    [
      'an opened pull request',
      'pull_request',
      pr('opened'),
      { kind: 'pull_request', number: 7, branch: 'fix', base: 'main', commit: sha },
    ],
    [
      'an updated pull request',
      'pull_request',
      pr('synchronize'),
      { kind: 'pull_request', number: 7, branch: 'fix', base: 'main', commit: sha },
    ],
    [
      'a reopened pull request',
      'pull_request',
      pr('reopened'),
      { kind: 'pull_request', number: 7, branch: 'fix', base: 'main', commit: sha },
    ],
    [
      'a closed pull request',
      'pull_request',
      pr('closed'),
      { kind: 'pull_request_closed', number: 7, branch: 'fix' },
    ],
    ['a labelled pull request', 'pull_request', pr('labeled'), undefined],
    ["a fork's pull request", 'pull_request', pr('opened', 'mallory/app'), undefined],
    [
      'a fork that was deleted',
      'pull_request',
      {
        ...pr('opened'),
        pull_request: { head: { ref: 'fix', repo: null }, base: { ref: 'main' } },
      },
      undefined,
    ],
    [
      'a pull request without a number',
      'pull_request',
      pr('opened', 'acme/app', { number: undefined }),
      undefined,
    ],
  ])('%s', (_name, event, body, expected) => {
    expect(hookEventOf(event, body as never)).toEqual(expected);
  });
});

describe('preview names and expiry', () => {
  it('name the parent and the branch, within 100 characters', () => {
    expect(previewName('web', 'feature/login')).toBe('web-feature/login');
    expect(previewName('w'.repeat(90), 'b'.repeat(20))).toHaveLength(100);
  });
  it('expire ttl days after the last push', () => {
    const at = new Date('2026-11-28T10:00:00Z');
    expect(previewExpiry(at, 7).toISOString()).toBe('2026-12-05T10:00:00.000Z');
  });
});
