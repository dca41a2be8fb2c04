// The role memo holds at most its bound, dropping the pair least recently used.
import { describe, expect, it } from 'vitest';
import { createRoleMemo } from '../../src/access/role-memo.ts';

const seen = (v: number) =>
  ({ role: 'member', caller_access_version: v, project_access_version: v }) as const;

describe('role memo bound', () => {
  it('drops the least recently used pair, not the first remembered', () => {
    const memo = createRoleMemo(undefined, 3);
    memo.remember('u1', 'p', seen(1));
    memo.remember('u2', 'p', seen(2));
    memo.remember('u3', 'p', seen(3));
    expect(memo.hint('u1', 'p')?.userVersion).toBe(1);
    memo.remember('u4', 'p', seen(4));
    expect(memo.size).toBe(3);
    expect(memo.hint('u2', 'p')).toBeUndefined();
    expect(memo.hint('u1', 'p')?.userVersion).toBe(1);
    expect(memo.hint('u4', 'p')?.userVersion).toBe(4);
  });

  it('replaces a pair remembered again without dropping another', () => {
    const memo = createRoleMemo(undefined, 2);
    memo.remember('u1', 'p', seen(1));
    memo.remember('u2', 'p', seen(2));
    memo.remember('u1', 'p', seen(5));
    expect(memo.size).toBe(2);
    expect(memo.hint('u1', 'p')?.userVersion).toBe(5);
    expect(memo.hint('u2', 'p')?.userVersion).toBe(2);
  });
});
