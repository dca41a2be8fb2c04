// frames logs (--follow), events (--follow) and status (--watch): what a frame did and does.
import type { Command } from 'commander';
import type { Schemas } from '../sdk/index.ts';
import { context, group, projectOption } from './context.ts';
import { eventText, statusText } from '../sdk/event-text.ts';
import { pathOf } from './frames.ts';
import { paint, statusColour } from './output.ts';
import { frame as findFrame } from './resolve.ts';
import { download } from './log-download.ts';
import { type LogFilterOptions, logFilterOptions, logQuery } from './log-filters.ts';

interface LogsOptions extends LogFilterOptions {
  project: string;
  follow?: boolean;
  tail: string;
  download?: string;
}

/** Ends the stream on Ctrl-C instead of killing the process mid-line. */
function interruptible() {
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  return abort.signal;
}

/** "<at> replica 1 crashed (exit 1)": a status change in the status's colour. */
const eventLine = (e: Schemas['FrameEvent'], verbose: boolean) => {
  const words = eventText(e, verbose);
  return `${paint(e.at, 'dim')} ${e.status ? paint(words, statusColour(e.status)) : words}`;
};

export function register(program: Command) {
  const frames = group(program, 'frames');
  // --json prints one JSON object a line (NDJSON) here: a followed stream has no end to close
  // an array with.
  const logs = frames
    .command('logs <frame>')
    .description(
      "a frame's log lines (--follow: keep printing new ones; --download: every matching line " +
        'to a file)',
    )
    .requiredOption(...projectOption)
    .option('-f, --follow', 'keep the stream open and print lines as they come')
    .option('-n, --tail <n>', 'the newest n lines', '100')
    .option('--download <file>', 'write every matching line the service keeps to file');
  for (const o of logFilterOptions()) logs.addOption(o);
  logs.action(async (ref: string, opts: LogsOptions, cmd) => {
    const { fp, json } = context(cmd);
    const f = await findFrame(fp, opts.project, ref);
    const filters = logQuery(opts);
    if (opts.download !== undefined) return download(fp, f, filters, opts.download);
    const print = (l: Schemas['LogLine']) =>
      process.stdout.write(
        json ? `${JSON.stringify(l)}\n` : `${paint(`${l.at} [${l.replica}]`, 'dim')} ${l.line}\n`,
      );
    const tail = Number(opts.tail);
    if (opts.follow) {
      for await (const e of fp.logs(f, { ...filters, tail }, interruptible())) print(e.data);
      return;
    }
    // Typed as JSON or the event stream (the operation declares both); this asks for JSON.
    const page = (await fp.call(
      fp.api.GET('/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/logs', {
        params: { path: pathOf(f), query: { ...filters, tail } },
      }),
    )) as Schemas['LogLineList'];
    for (const line of page.data) print(line);
  });

  frames
    .command('events <frame>')
    .description("a frame's events: operations, deployments, status changes")
    .requiredOption(...projectOption)
    .option('-f, --follow', 'then keep printing new ones')
    .action(async (ref: string, opts: { project: string; follow?: boolean }, cmd) => {
      const { fp, json, verbose } = context(cmd);
      const f = await findFrame(fp, opts.project, ref);
      const print = (e: Schemas['FrameEvent']) =>
        process.stdout.write(`${json ? JSON.stringify(e) : eventLine(e, verbose)}\n`);
      let cursor: string | undefined;
      let last: string | undefined;
      for (;;) {
        const page = (await fp.call(
          fp.api.GET('/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/events', {
            params: { path: pathOf(f), query: { cursor } },
          }),
        )) as { data: Schemas['FrameEvent'][]; next_cursor: string | null };
        for (const e of page.data) print(e);
        last = page.data.at(-1)?.id ?? last;
        if (!page.next_cursor) break;
        cursor = page.next_cursor;
      }
      if (!opts.follow) return;
      // The stream goes on after the last event listed (as Last-Event-ID), so none is missed.
      for await (const e of fp.events(f, {}, interruptible(), last)) print(e.data);
    });

  frames
    .command('status <frame>')
    .description("a frame's status (--watch: print each change until Ctrl-C)")
    .requiredOption(...projectOption)
    .option('-w, --watch', 'keep printing the status as it changes')
    .action(async (ref: string, opts: { project: string; watch?: boolean }, cmd) => {
      const { fp, json } = context(cmd);
      const f = await findFrame(fp, opts.project, ref);
      const print = (status: string, reason: string | null, at: string) => {
        const shown = paint(statusText(status, reason), statusColour(status));
        const human = `${paint(at, 'dim')} ${shown}`;
        const line = json ? JSON.stringify({ status, status_reason: reason, at }) : human;
        process.stdout.write(`${line}\n`);
      };
      print(f.status, f.status_reason, f.updated_at);
      if (!opts.watch) return;
      for await (const e of fp.events(f, {}, interruptible()))
        if (e.data.status) print(e.data.status, e.data.status_reason, e.data.at);
    });
}
