// The agent reads and hands over a tenant's tree without trusting it (src/runner/tenant-files.ts):
// links are never followed, FIFOs and devices never opened for long, sizes bounded, files with
// other names elsewhere never given away.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import {
  chownSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  entryKind,
  handOver,
  readTenantText,
  TenantFileError,
} from '../../src/runner/tenant-files.ts';
import { planOf } from '../../src/runner/builder/plan.ts';

let tmp: string;
let tree: string;
let victim: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'fp-tenant-files-'));
  tree = join(tmp, 'tree');
  mkdirSync(tree);
  victim = join(tmp, 'victim');
  writeFileSync(victim, 'secret of the host');
  writeFileSync(join(tree, 'Procfile'), 'web: node server.js\n');
  symlinkSync(victim, join(tree, 'linked'));
  symlinkSync(join(tmp, 'nothing-here'), join(tree, 'dangling'));
  symlinkSync('/dev/zero', join(tree, 'zero'));
  execFileSync('mkfifo', [join(tree, 'fifo')]);
  mkdirSync(join(tree, 'dir'));
  writeFileSync(join(tree, 'big'), Buffer.alloc(2048, 'x'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('reading a tenant file', () => {
  it('reads a regular file and answers undefined for an absent one', () => {
    expect(readTenantText(tree, 'Procfile')).toBe('web: node server.js\n');
    expect(readTenantText(tree, 'absent')).toBeUndefined();
  });

  it.each([
    ['linked', /symbolic link/],
    ['dangling', /symbolic link/],
    ['zero', /symbolic link/],
    ['fifo', /not a regular file/],
    ['dir', /not a regular file/],
  ])('refuses %s without following or blocking', (name, why) => {
    const started = Date.now();
    expect(() => readTenantText(tree, name)).toThrow(TenantFileError);
    expect(() => readTenantText(tree, name)).toThrow(why);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('refuses a file past the bound, and names that leave the top of the tree', () => {
    expect(() => readTenantText(tree, 'big', 1024)).toThrow(/larger than 1024 bytes/);
    expect(readTenantText(tree, 'big', 4096)).toHaveLength(2048);
    for (const name of ['../victim', 'dir/x', '.', '..', ''])
      expect(() => readTenantText(tree, name)).toThrow(/not a plain file name/);
  });

  it('tells what a name is without following it', () => {
    expect(entryKind(tree, 'Procfile')).toBe('file');
    expect(entryKind(tree, 'linked')).toBe('symlink');
    expect(entryKind(tree, 'dangling')).toBe('symlink');
    expect(entryKind(tree, 'fifo')).toBe('other');
    expect(entryKind(tree, 'dir')).toBe('dir');
    expect(entryKind(tree, 'absent')).toBeUndefined();
  });
});

describe("a checkout's plan", () => {
  it('is refused, in words, when its Procfile or package.json is a link or a FIFO', () => {
    const dir = join(tmp, 'plan');
    mkdirSync(dir);
    symlinkSync(victim, join(dir, 'Procfile'));
    const plan = planOf(dir);
    expect(plan).toBeInstanceOf(Error);
    expect((plan as Error).message).toMatch(/Procfile is a symbolic link/);
    rmSync(join(dir, 'Procfile'));
    execFileSync('mkfifo', [join(dir, 'package.json')]);
    expect((planOf(dir) as Error).message).toMatch(/package.json is not a regular file/);
  });
});

describe.runIf(process.getuid?.() === 0)('handing a tree to a frame uid (as root)', () => {
  it('changes its own files and directories, never a link target nor a file with other names', () => {
    const dir = join(tmp, 'hand');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    writeFileSync(join(dir, 'own'), 'x');
    writeFileSync(join(dir, 'sub', 'deep'), 'x');
    const outsider = join(tmp, 'outsider');
    writeFileSync(outsider, 'x');
    chownSync(outsider, 0, 0);
    symlinkSync(outsider, join(dir, 'link'));
    symlinkSync(tmp, join(dir, 'dirlink'));
    linkSync(outsider, join(dir, 'hardlink')); // as a local clone's objects would be
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    const uid = 1_000_123_456;
    const skipped = handOver(dir, uid, uid);
    expect(statSync(dir).uid).toBe(uid);
    expect(statSync(join(dir, 'own')).uid).toBe(uid);
    expect(statSync(join(dir, 'sub')).uid).toBe(uid);
    expect(statSync(join(dir, 'sub', 'deep')).uid).toBe(uid);
    expect(statSync(outsider).uid).toBe(0);
    expect(statSync(tmp).uid).toBe(0);
    expect(lstatSync(join(dir, 'link')).uid).toBe(0);
    expect(skipped).toBe(4); // link, dirlink, hardlink, fifo
  });
});
