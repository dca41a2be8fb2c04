// Issue 34, item 10: an image's USER that is root by number, however written, or by name runs as
// the unprivileged user instead (src/runner/builder/dockerfile.ts, `runAsUser`). Issue 40: an
// image's label asks for a read-only root, which keeps a /tmp of its own.
import { describe, expect, it } from 'vitest';
import {
  APP_USER,
  needsOwnTmp,
  READ_ONLY_ROOT_LABEL,
  runAsUser,
  volumeOwner,
  wantsReadOnlyRoot,
} from '../../src/runner/builder/dockerfile.ts';

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

describe('who a new volume is handed to', () => {
  it.each([
    ['1000:1000', '1000:1000'],
    ['1001', '1001'],
    ['1001:1002', '1001:1002'],
    ['100:0', '100:0'],
    ['node', APP_USER],
    ['app:app', APP_USER],
    ['1001:app', APP_USER],
    ['', APP_USER],
  ])('an app run as %j: %j', (runAs, owner) => {
    expect(volumeOwner(runAs)).toBe(owner);
  });
});

describe('a read-only root', () => {
  it.each([
    [undefined, false],
    [null, false],
    [{}, false],
    [{ other: 'true' }, false],
    [{ [READ_ONLY_ROOT_LABEL]: '' }, false],
    [{ [READ_ONLY_ROOT_LABEL]: 'false' }, false],
    [{ [READ_ONLY_ROOT_LABEL]: '1' }, false],
    [{ [READ_ONLY_ROOT_LABEL]: 'yes' }, false],
    [{ [READ_ONLY_ROOT_LABEL]: 'truely' }, false],
    [{ [READ_ONLY_ROOT_LABEL]: 'true' }, true],
    [{ [READ_ONLY_ROOT_LABEL]: 'TRUE' }, true],
    [{ [READ_ONLY_ROOT_LABEL]: ' True ' }, true],
  ])('labels %j: %s', (labels, want) => {
    expect(wantsReadOnlyRoot(labels)).toBe(want);
  });

  const at = (...paths: string[]) => paths.map((mount_path) => ({ mount_path }));
  it.each([
    [false, at(), false],
    [false, at('/data'), false],
    [true, at(), true],
    [true, at('/data'), true],
    [true, at('/tmp/cache'), true],
    [true, at('/data', '/tmp'), false],
  ])('read-only %s, volumes %j: a /tmp of its own %s', (readOnly, volumes, want) => {
    expect(needsOwnTmp(readOnly, volumes)).toBe(want);
  });
});
