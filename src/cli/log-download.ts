// frames logs --download <file>: the matching lines, as the service streams them, into a file.
// Written to a file beside it and renamed at the end, so that a download cut short never leaves
// a file that looks whole.
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebStream } from 'node:stream/web';
import type { Frameplane, Schemas } from '../sdk/index.ts';
import { pathOf } from './frames.ts';
import { note } from './output.ts';
import type { logQuery } from './log-filters.ts';

export async function download(
  fp: Frameplane,
  frame: Schemas['Frame'],
  query: ReturnType<typeof logQuery>,
  file: string,
) {
  const body = await fp.call(
    fp.api.GET('/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/logs/download', {
      params: { path: pathOf(frame), query },
      parseAs: 'stream',
    }),
  );
  if (!body) throw new Error('the service answered no body');
  const partial = `${file}.partial`;
  let bytes = 0;
  const counted = Readable.fromWeb(body as WebStream<Uint8Array>).on('data', (c: Buffer) => {
    bytes += c.length;
  });
  try {
    await pipeline(counted, createWriteStream(partial));
    await rename(partial, file);
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
  note(`wrote ${bytes} bytes to ${file}`);
}
