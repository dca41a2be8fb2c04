// Issue 34, item 10: an image's USER that is root by number, however written, or by name runs as
// the unprivileged user instead (src/runner/builder/dockerfile.ts, `runAsUser`).
import { describe, expect, it } from 'vitest';
import { APP_USER, runAsUser } from '../../src/runner/builder/dockerfile.ts';

describe('the user a container runs as', () => {
  it.each([
    undefined,
    '',
    'root',
    'root:root',
    'root:1000',
    '0',
    '00',
    '000',
    '+0',
    '-0',
    '0:0',
    '00:1000',
    '000:1',
    ':0',
    ':1000',
  ])('%j is root: the app user instead', (user) => {
    expect(runAsUser(user)).toBe(APP_USER);
  });

  it.each(['1000', '1000:1000', '10', '100:0', 'node', 'app:app', 'rooted', '0x0', '01'])(
    '%j is kept',
    (user) => {
      expect(runAsUser(user)).toBe(user);
    },
  );
});
