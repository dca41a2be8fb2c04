// notifications list/add/update/remove/deliveries/redeliver/test/rotate-secret: a project's
// outgoing webhooks (src/notifications), for its admins. `add` and `rotate-secret` print the
// signing secret, which the service shows only then; `test` sends a ping and waits for what
// the receiver answered.
import { Command, Option } from 'commander';
import type { Frameplane, Schemas } from '../sdk/index.ts';
import { context, projectOption } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import {
  deliveryTable,
  endpointRow,
  endpointTable,
  showDelivery,
  showSecret,
} from './notification-output.ts';
import { details, note } from './output.ts';
import { projectId, pick } from './resolve.ts';

type Delivery = Schemas['NotificationDelivery'];
type EventName = Schemas['NotificationEndpoint']['events'][number];
const BASE = '/v2/projects/{project_id}/notifications';
const ONE = `${BASE}/{endpoint_id}` as const;

/** The project's path and the endpoint named by id or URL. */
async function findEndpoint(fp: Frameplane, projectRef: string, ref: string) {
  const project_id = await projectId(fp, projectRef);
  const all = fp.pages((cursor) =>
    fp.api.GET(BASE, { params: { path: { project_id }, query: { cursor, limit: 200 } } }),
  );
  const e = await pick(all, (x) => x.url, ref, 'notification endpoint', 'in this project');
  return { project_id, endpoint_id: e.id };
}

function events(list: string): EventName[] {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean) as EventName[];
}

/** Reads the delivery until its try is done (a ping or a redelivery is tried once), ≤ 30 s. */
async function settled(
  fp: Frameplane,
  at: { project_id: string; endpoint_id: string },
  d: Delivery,
) {
  const until = Date.now() + 30_000;
  const path = { ...at, delivery_id: d.id };
  let now = d;
  while (now.status === 'pending' && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 250));
    now = await fp.call(fp.api.GET(`${ONE}/deliveries/{delivery_id}`, { params: { path } }));
  }
  return now;
}

/** The exit code of a try waited for: 6 when it failed, 7 when it is still pending. */
const outcomeCode = (d: Delivery) =>
  d.status === 'failed' ? EXIT.waitFailed : d.status === 'pending' ? EXIT.waitTimeout : EXIT.ok;

export function register(program: Command) {
  const group = program
    .command('notifications')
    .description("a project's outgoing webhooks: its events, signed, sent to your endpoints");
  group
    .command('list')
    .alias('ls')
    .description('the endpoints and the events each receives (admin)')
    .requiredOption(...projectOption)
    .action(async (opts: { project: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = { project_id: await projectId(fp, opts.project) };
      const all = await fp.all((cursor) =>
        fp.api.GET(BASE, { params: { path, query: { cursor } } }),
      );
      show(all, endpointTable);
    });
  group
    .command('add <url>')
    .description('add an endpoint (admin); prints its signing secret, shown only now')
    .requiredOption('--events <list>', 'comma-separated, e.g. deploy.failed,frame.error')
    .addOption(new Option('--format <format>', 'the body').choices(['json', 'slack']))
    .requiredOption(...projectOption)
    .action(
      async (
        url: string,
        opts: { project: string; events: string; format?: 'json' | 'slack' },
        cmd: Command,
      ) => {
        const { fp, show } = context(cmd);
        const path = { project_id: await projectId(fp, opts.project) };
        const body = {
          url,
          events: events(opts.events),
          ...(opts.format ? { format: opts.format } : {}),
        };
        const made = await fp.call(fp.api.POST(BASE, { params: { path }, body }));
        show(made, showSecret);
      },
    );
  group
    .command('update <endpoint>')
    .description('change an endpoint (by id or URL), or turn it off or on again (admin)')
    .option('--url <url>', 'a new address')
    .option('--events <list>', 'the events it receives from now on, comma-separated')
    .addOption(new Option('--format <format>', 'the body').choices(['json', 'slack']))
    .addOption(
      new Option('--enable', 'turn it on again; its failures are forgotten').conflicts('disable'),
    )
    .option('--disable', 'turn it off: nothing is queued for it until it is on again')
    .requiredOption(...projectOption)
    .action(
      async (
        ref: string,
        opts: Record<string, string | boolean | undefined> & { project: string },
        cmd: Command,
      ) => {
        const { fp, show } = context(cmd);
        const path = await findEndpoint(fp, opts.project, ref);
        const body = {
          ...(typeof opts.url === 'string' ? { url: opts.url } : {}),
          ...(typeof opts.events === 'string' ? { events: events(opts.events) } : {}),
          ...(typeof opts.format === 'string' ? { format: opts.format as 'json' | 'slack' } : {}),
          ...(opts.enable ? { enabled: true } : opts.disable ? { enabled: false } : {}),
        };
        if (Object.keys(body).length === 0)
          throw new CliError(
            'say what to change: --url, --events, --format, --enable or --disable',
            EXIT.usage,
          );
        const e = await fp.call(fp.api.PATCH(ONE, { params: { path }, body }));
        show(e, (x) => details(endpointRow(x)));
      },
    );
  group
    .command('remove <endpoint>')
    .alias('rm')
    .description('remove an endpoint and its delivery log (admin)')
    .requiredOption(...projectOption)
    .action(async (ref: string, opts: { project: string }, cmd: Command) => {
      const { fp, json } = context(cmd);
      const path = await findEndpoint(fp, opts.project, ref);
      await fp.call(fp.api.DELETE(ONE, { params: { path } }));
      if (!json) note(`Removed ${path.endpoint_id}.`);
    });
  group
    .command('rotate-secret <endpoint>')
    .description('a new signing secret (admin); the old one stops signing at once, or later')
    .option(
      '--expire-previous-in <hours>',
      'the old secret goes on signing next to the new one for this long (0-24)',
      '0',
    )
    .requiredOption(...projectOption)
    .action(async (ref: string, opts: { project: string; expirePreviousIn: string }, cmd) => {
      const { fp, show } = context(cmd);
      const path = await findEndpoint(fp, opts.project, ref);
      const body = { expire_previous_in_hours: Number(opts.expirePreviousIn) };
      show(await fp.call(fp.api.POST(`${ONE}/secret`, { params: { path }, body })), showSecret);
    });
  group
    .command('deliveries <endpoint>')
    .description("the endpoint's deliveries, newest first, with their last try (admin)")
    .option('--limit <n>', 'how many', '20')
    .requiredOption(...projectOption)
    .action(async (ref: string, opts: { project: string; limit: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = await findEndpoint(fp, opts.project, ref);
      const query = { limit: Number(opts.limit) };
      const page = await fp.call(fp.api.GET(`${ONE}/deliveries`, { params: { path, query } }));
      show(page.data, deliveryTable);
    });
  const sent = (what: string) =>
    new Command(what)
      .option('--no-wait', 'answer once it is queued, without waiting for the try')
      .requiredOption(...projectOption);
  group.addCommand(
    sent('test')
      .argument('<endpoint>')
      .description('send a test event, ping, and show what the receiver answered (admin)')
      .action(async (ref: string, opts: { project: string; wait: boolean }, cmd: Command) => {
        const { fp, show } = context(cmd);
        const path = await findEndpoint(fp, opts.project, ref);
        const d = await fp.call(fp.api.POST(`${ONE}/test`, { params: { path } }));
        const done = opts.wait ? await settled(fp, path, d) : d;
        show(done, showDelivery);
        if (opts.wait) process.exitCode = outcomeCode(done);
      }),
  );
  group.addCommand(
    sent('redeliver')
      .argument('<endpoint>')
      .argument('<delivery>')
      .description('send a delivery again: the same event id and body (admin)')
      .action(
        async (ref: string, id: string, opts: { project: string; wait: boolean }, cmd: Command) => {
          const { fp, show } = context(cmd);
          const path = { ...(await findEndpoint(fp, opts.project, ref)), delivery_id: id };
          const d = await fp.call(
            fp.api.POST(`${ONE}/deliveries/{delivery_id}/redeliver`, { params: { path } }),
          );
          const done = opts.wait ? await settled(fp, path, d) : d;
          show(done, showDelivery);
          if (opts.wait) process.exitCode = outcomeCode(done);
        },
      ),
  );
}
