// Files of a tenant's checkout, as the agent (often root) meets them. The tree is hostile: any
// name may be a symbolic link to a file of the host, a FIFO that blocks whoever opens it, or a
// file too large to hold. So the agent never follows a link in it, opens only regular files,
// never blocks on an open, and reads a bounded number of bytes. What the agent writes for
// itself lives outside the tree (never through a name the tenant controls).
import {
  closeSync,
  constants,
  fchownSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
} from 'node:fs';
import { join } from 'node:path';

/** What a name of the tree is, without following it; undefined when absent. */
export type EntryKind = 'file' | 'dir' | 'symlink' | 'other';

/** The largest file of a checkout the agent reads for itself (Procfile, package.json, Dockerfile). */
export const MAX_READ_BYTES = 1024 * 1024;

/** A name of the tree the agent refuses to read, and why, in words for the deployment's log. */
export class TenantFileError extends Error {}

/** Only a plain name at the top of the tree: no separators, no `.`/`..`. */
function checkedName(name: string): string {
  if (!name || name === '.' || name === '..' || name.includes('/') || name.includes('\0'))
    throw new Error(`not a plain file name: ${JSON.stringify(name)}`);
  return name;
}

export function entryKind(dir: string, name: string): EntryKind | undefined {
  try {
    const st = lstatSync(join(dir, checkedName(name)));
    if (st.isSymbolicLink()) return 'symlink';
    if (st.isFile()) return 'file';
    if (st.isDirectory()) return 'dir';
    return 'other';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

// O_NOFOLLOW: a link is refused by the kernel itself (ELOOP), so no check can be raced past.
// O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer.
const OPEN_FLAGS =
  constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * The text of `dir/name`, or undefined when there is no such name. Throws TenantFileError when
 * the name is a link, a directory, a FIFO, a device or a socket, or holds more than `maxBytes`.
 */
export function readTenantText(
  dir: string,
  name: string,
  maxBytes = MAX_READ_BYTES,
): string | undefined {
  const bytes = readTenantBytes(dir, name, maxBytes);
  return bytes === undefined ? undefined : bytes.toString('utf8');
}

export function readTenantBytes(
  dir: string,
  name: string,
  maxBytes = MAX_READ_BYTES,
): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(join(dir, checkedName(name)), OPEN_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw new TenantFileError(`${name} is a symbolic link`);
    if (code === 'ENXIO') throw new TenantFileError(`${name} is not a regular file`); // a socket
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new TenantFileError(`${name} is not a regular file`);
    if (st.size > maxBytes)
      throw new TenantFileError(`${name} is larger than ${maxBytes} bytes (${st.size})`);
    // The size may grow while we read (a running app writes it): never read past the bound.
    const buf = Buffer.alloc(maxBytes + 1);
    let got = 0;
    for (;;) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n <= 0) break;
      got += n;
      if (got === buf.length) break;
    }
    if (got > maxBytes) throw new TenantFileError(`${name} is larger than ${maxBytes} bytes`);
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/**
 * Gives a tree to the uid its app runs as (the process runtime, as root). Every entry is opened
 * relative to its directory's descriptor (through /proc/self/fd, the openat of Node) with
 * O_NOFOLLOW and changed through its own descriptor, so a link, or a directory swapped for one
 * meanwhile, never leads outside the tree. A file with more than one link is left alone: its
 * other names may be outside the tree (a hard link to a file of the host or of the git host).
 * Answers the number of entries skipped.
 */
export function handOver(dir: string, uid: number, gid: number): number {
  const top = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    return handOverFd(top, uid, gid);
  } finally {
    closeSync(top);
  }
}

function handOverFd(dirFd: number, uid: number, gid: number): number {
  fchownSync(dirFd, uid, gid);
  let skipped = 0;
  const here = `/proc/self/fd/${dirFd}`;
  for (const name of readdirSync(here)) {
    let fd: number;
    try {
      fd = openSync(`${here}/${name}`, OPEN_FLAGS);
    } catch {
      skipped++; // a link (ELOOP), a socket (ENXIO), or gone meanwhile
      continue;
    }
    try {
      const st = fstatSync(fd);
      if (st.isDirectory()) skipped += handOverFd(fd, uid, gid);
      else if (st.isFile() && st.nlink === 1) fchownSync(fd, uid, gid);
      else skipped++;
    } finally {
      closeSync(fd);
    }
  }
  return skipped;
}
