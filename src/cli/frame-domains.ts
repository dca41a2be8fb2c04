// frames domains list/add/verify/remove: a frame's custom hostnames. A claim is pending until
// the TXT record the service names is in DNS and `verify` finds it; only verified ones route,
// and traffic reaches the frame once the domain's CNAME points at its hostname (`target`).
import type { Command } from 'commander';
import type { Frameplane, Schemas } from '../sdk/index.ts';
import { context, group, projectOption } from './context.ts';
import { pathOf } from './frames.ts';
import { details, note, paint, table } from './output.ts';
import { frame as findFrame, pick } from './resolve.ts';

type Domain = Schemas['Domain'];
const domainsPath = '/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/domains';
const domainPath = `${domainsPath}/{domain_id}` as const;

const record = (d: Domain) =>
  `${d.verification.type} ${d.verification.name} "${d.verification.value}"`;

const domainRow = (d: Domain) => ({
  id: d.id,
  hostname: d.hostname,
  verified: d.verified ? 'yes' : 'no',
  'cname target': d.target,
  'dns record': d.verified ? null : record(d),
});

/** A domain and what to do with it: the TXT record while it is pending, and the CNAME. */
function showDomain(d: Domain) {
  details({
    id: d.id,
    hostname: d.hostname,
    verified: d.verified ? `yes (${d.verified_at})` : 'no',
    'record type': d.verification.type,
    'record name': d.verification.name,
    'record value': d.verification.value,
    'cname target': d.target,
  });
  const cname = `A CNAME record for ${d.hostname} pointing at ${d.target} routes it to the frame.`;
  const todo = d.verified
    ? cname
    : `Create that TXT record in ${d.hostname}'s DNS, then run ` +
      `\`frameplane frames domains verify\`. ${cname}`;
  note(paint(todo, 'dim', process.stderr));
}

/** The frame named by `ref` and one of its domains, by id or hostname. */
async function findDomain(fp: Frameplane, projectRef: string, ref: string, hostname: string) {
  const f = await findFrame(fp, projectRef, ref);
  // As the service stores it: lower-cased, without the trailing dot.
  const name = hostname.startsWith('dom_') ? hostname : hostname.toLowerCase().replace(/\.$/, '');
  const domains = fp.pages((cursor) =>
    fp.api.GET(domainsPath, { params: { path: pathOf(f), query: { cursor, limit: 200 } } }),
  );
  const d = await pick(domains, (x) => x.hostname, name, 'domain', `on frame ${f.name}`);
  return { path: { ...pathOf(f), domain_id: d.id }, domain: d };
}

export function register(program: Command) {
  const domains = group(program, 'frames')
    .command('domains')
    .description("a frame's custom domains (claimed, proven by a DNS TXT record, routed)");
  domains
    .command('list <frame>')
    .description("the frame's domains, and the TXT record each pending one waits for")
    .requiredOption(...projectOption)
    .action(async (ref: string, opts: { project: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = pathOf(await findFrame(fp, opts.project, ref));
      const all = await fp.all((cursor) =>
        fp.api.GET(domainsPath, { params: { path, query: { cursor } } }),
      );
      show(all, (list) =>
        table(list.map(domainRow), ['id', 'hostname', 'verified', 'cname target', 'dns record'], {
          verified: (v) => (v === 'yes' ? 'green' : 'yellow'),
        }),
      );
    });
  domains
    .command('add <frame> <hostname>')
    .description(
      'claim a hostname (project admin); prints the TXT record that proves it and the CNAME target',
    )
    .requiredOption(...projectOption)
    .action(async (ref: string, hostname: string, opts: { project: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = pathOf(await findFrame(fp, opts.project, ref));
      const d = await fp.call(fp.api.POST(domainsPath, { params: { path }, body: { hostname } }));
      show(d, showDomain);
    });
  domains
    .command('verify <frame> <domain>')
    .description('check the TXT record of a claim (by id or hostname); then it is routed')
    .requiredOption(...projectOption)
    .action(async (ref: string, which: string, opts: { project: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const { path } = await findDomain(fp, opts.project, ref, which);
      const d = await fp.call(fp.api.POST(`${domainPath}/verify`, { params: { path } }));
      show(d, showDomain);
    });
  domains
    .command('remove <frame> <domain>')
    .description('detach a hostname (by id or hostname; project admin)')
    .requiredOption(...projectOption)
    .action(async (ref: string, which: string, opts: { project: string }, cmd: Command) => {
      const { fp, json } = context(cmd);
      const { path, domain } = await findDomain(fp, opts.project, ref, which);
      await fp.call(fp.api.DELETE(domainPath, { params: { path } }));
      if (!json) note(`Removed ${domain.hostname} from ${ref}.`);
    });
}
