// What a release changed against the one before it (src/deployments/release-changes.ts): cases by
// table, and the set laws by property.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  previousRelease,
  type ReleaseFacts,
  releaseChanges,
} from '../../src/deployments/release-changes.ts';

const base: ReleaseFacts = {
  id: 'dep_1',
  commit_sha: 'a'.repeat(40),
  git_repository: 'app',
  git_repository_owner: 'acme',
  git_repository_branch: 'main',
  env: {},
  settings: { port: 8080, replica_count: 1, health_check_path: '/' },
};
const next = (o: Partial<ReleaseFacts>): ReleaseFacts => ({ ...base, id: 'dep_2', ...o });

describe('releaseChanges', () => {
  it.each([
    ['nothing to compare with', undefined, next({}), true, undefined],
    [
      'the same release again',
      base,
      next({}),
      true,
      {
        against: 'dep_1',
        commits: null,
        env: { added: [], changed: [], removed: [] },
        settings: [],
      },
    ],
    [
      'a new commit, a new branch and a scale',
      base,
      next({
        commit_sha: 'b'.repeat(40),
        git_repository_branch: 'dev',
        settings: { port: 8080, replica_count: 3, health_check_path: '/' },
      }),
      true,
      {
        against: 'dep_1',
        commits: { from: 'a'.repeat(40), to: 'b'.repeat(40) },
        env: { added: [], changed: [], removed: [] },
        settings: [
          { field: 'git_repository_branch', from: 'main', to: 'dev' },
          { field: 'replica_count', from: 1, to: 3 },
        ],
      },
    ],
    [
      'settings one side never recorded are not compared',
      { ...base, settings: null },
      next({ settings: { port: 9000, replica_count: 2, health_check_path: '/h' } }),
      true,
      {
        against: 'dep_1',
        commits: null,
        env: { added: [], changed: [], removed: [] },
        settings: [],
      },
    ],
  ])('%s', (_name, previous, release, values, expected) => {
    expect(releaseChanges(previous, release, values)).toEqual(expected);
  });

  it('tells env values to readers only, keys sorted, including prototype-like names', () => {
    const before = { ...base, env: { B: '1', A: 'x', constructor: 'c' } };
    const after = next({ env: { B: '2', C: 'new', A: 'x', toString: 't' } });
    expect(releaseChanges(before, after, true)?.env).toEqual({
      added: [
        { key: 'C', to: 'new' },
        { key: 'toString', to: 't' },
      ],
      changed: [{ key: 'B', from: '1', to: '2' }],
      removed: [{ key: 'constructor', from: 'c' }],
    });
    expect(releaseChanges(before, after, false)?.env).toEqual({
      added: [{ key: 'C' }, { key: 'toString' }],
      changed: [{ key: 'B' }],
      removed: [{ key: 'constructor' }],
    });
  });

  it('partitions the keys: added and kept are the new env, removed the rest of the old', () => {
    const env = fc.dictionary(fc.string({ maxLength: 4 }), fc.constantFrom('0', '1', '2'));
    fc.assert(
      fc.property(env, env, fc.boolean(), (a, b, values) => {
        const c = releaseChanges({ ...base, env: a }, next({ env: b }), values);
        if (!c) return false;
        const keys = (l: Array<{ key: string }>) => l.map((x) => x.key);
        const unchanged = Object.keys(b).filter((k) => Object.hasOwn(a, k) && a[k] === b[k]);
        expect(new Set([...keys(c.env.added), ...keys(c.env.changed), ...unchanged])).toEqual(
          new Set(Object.keys(b)),
        );
        expect(new Set(keys(c.env.removed))).toEqual(
          new Set(Object.keys(a).filter((k) => !Object.hasOwn(b, k))),
        );
        const all = [...c.env.added, ...c.env.changed, ...c.env.removed];
        // Viewers get names only; readers get exactly the values on each side.
        for (const x of all) expect('from' in x || 'to' in x).toBe(values);
        return true;
      }),
    );
  });
});

describe('previousRelease', () => {
  it('is the newest succeeded deployment before the one asked about', () => {
    const rows = [
      { id: 'dep_5', status: 'succeeded' },
      { id: 'dep_4', status: 'failed' },
      { id: 'dep_3', status: 'succeeded' },
      { id: 'dep_2', status: 'superseded' },
      { id: 'dep_1', status: 'succeeded' },
    ];
    expect(previousRelease(rows, 'dep_5')?.id).toBe('dep_3');
    expect(previousRelease(rows, 'dep_4')?.id).toBe('dep_3');
    expect(previousRelease(rows, 'dep_3')?.id).toBe('dep_1');
    expect(previousRelease(rows, 'dep_1')).toBeUndefined();
    expect(previousRelease([...rows].reverse(), 'dep_6')?.id).toBe('dep_5');
  });
});
