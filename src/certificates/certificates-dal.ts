// The statements of the edges' certificates: which hosts want one, the lease that lets one
// issuer at a time order a host's, what an order leaves, and what an agent may read.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import { wakeAfterCommit } from '../db/waker.ts';

/**
 * The hosts that want a certificate: the hostname of every frame placed on an agent whose edge
 * serves HTTPS, and the verified domains of those frames. Nothing else is ever ordered: a
 * pending domain proves nothing, and a name we do not hold is not ours to ask for.
 */
const wanted = (appsDomain: string) => sql<{ hostname: string }>`
  select f.hostname_label || '.' || ${appsDomain}::text as hostname
    from frames f join agents a on a.id = f.agent_id where a.edge_https_port is not null
  union
  select d.hostname from domains d join frames f on f.id = d.frame_id
    join agents a on a.id = f.agent_id
    where d.verified_at is not null and a.edge_https_port is not null`;

/** Wanted hosts whose certificate is missing or due, and that no back-off or lease holds. */
export async function dueHostnames(q: Queryable, appsDomain: string, now: Date, limit: number) {
  const { rows } = await sql<{ hostname: string }>`
    select w.hostname from (${wanted(appsDomain)}) w
    left join edge_certificates c on c.hostname = w.hostname
    where c.hostname is null
       or (c.attempt_at <= ${now} and (c.leased_until is null or c.leased_until <= ${now}))
    order by c.attempt_at nulls first, w.hostname
    limit ${limit}`.execute(q);
  return rows.map((r) => r.hostname);
}

/** Forgets the certificates of hosts no frame wants any more (a domain removed, a frame gone). */
export async function dropUnwanted(q: Queryable, appsDomain: string) {
  const { rows } = await sql<{ hostname: string }>`
    delete from edge_certificates c
    where not exists (select 1 from (${wanted(appsDomain)}) w where w.hostname = c.hostname)
    returning c.hostname`.execute(q);
  return rows.map((r) => r.hostname);
}

/**
 * Takes the host for one order until `until`, if it is due and no other issuer holds it: one
 * statement, so two instances (or two jobs) never order the same host at once.
 */
export async function lease(q: Queryable, hostname: string, now: Date, until: Date) {
  const { rows } = await sql<{ hostname: string }>`
    insert into edge_certificates as c (hostname, attempt_at, leased_until)
    values (${hostname}, ${now}, ${until})
    on conflict (hostname) do update set leased_until = excluded.leased_until
    where c.attempt_at <= ${now} and (c.leased_until is null or c.leased_until <= ${now})
    returning c.hostname`.execute(q);
  return rows.length === 1;
}

export interface Issued {
  certificate: string;
  privateKeySealed: string;
  fingerprint: string;
  notBefore: Date;
  notAfter: Date;
  renewAt: Date;
}

/** Keeps what an order issued and wakes the agents that serve the host. */
export async function storeIssued(q: Queryable, hostname: string, c: Issued, appsDomain: string) {
  await q
    .updateTable('edge_certificates')
    .set({
      certificate: c.certificate,
      private_key_sealed: c.privateKeySealed,
      fingerprint: c.fingerprint,
      not_before: c.notBefore,
      not_after: c.notAfter,
      attempt_at: c.renewAt,
      failures: 0,
      last_error: null,
      leased_until: null,
    })
    .where('hostname', '=', hostname)
    .execute();
  for (const agentId of await agentsServing(q, hostname, appsDomain))
    await wakeAfterCommit(q, 'frameplane_agent', agentId);
}

/** Counts a failed order and sets the host's back-off; its current certificate stays. */
export async function recordFailure(
  q: Queryable,
  hostname: string,
  error: string,
  retry: (failures: number) => Date,
) {
  const row = await q
    .selectFrom('edge_certificates')
    .select('failures')
    .where('hostname', '=', hostname)
    .forUpdate()
    .executeTakeFirst();
  if (!row) return undefined;
  const failures = row.failures + 1;
  const at = retry(failures);
  await q
    .updateTable('edge_certificates')
    .set({ failures, attempt_at: at, last_error: error.slice(0, 500), leased_until: null })
    .where('hostname', '=', hostname)
    .execute();
  return { failures, at };
}

/**
 * The frames of `agentId` (or of any agent) that hold `hostname`: its own hostname under
 * `appsDomain`, or a verified domain.
 */
function holders(q: Queryable, hostname: string, appsDomain: string) {
  const suffix = `.${appsDomain}`;
  const label = hostname.endsWith(suffix) ? hostname.slice(0, -suffix.length) : undefined;
  return q
    .selectFrom('frames as f')
    .select('f.agent_id')
    .where((eb) =>
      eb.or([
        ...(label ? [eb('f.hostname_label', '=', label)] : []),
        eb.exists(
          eb
            .selectFrom('domains as d')
            .select('d.id')
            .whereRef('d.frame_id', '=', 'f.id')
            .where('d.hostname', '=', hostname)
            .where('d.verified_at', 'is not', null),
        ),
      ]),
    );
}

async function agentsServing(q: Queryable, hostname: string, appsDomain: string) {
  const rows = await holders(q, hostname, appsDomain).where('f.agent_id', 'is not', null).execute();
  return [...new Set(rows.map((r) => r.agent_id as string))];
}

/** The host's certificate, if the agent serves the host and one was issued. */
export async function certificateFor(
  q: Queryable,
  agentId: string,
  hostname: string,
  appsDomain: string,
) {
  const served = await holders(q, hostname, appsDomain)
    .where('f.agent_id', '=', agentId)
    .executeTakeFirst();
  if (!served) return undefined;
  return q
    .selectFrom('edge_certificates')
    .select(['hostname', 'certificate', 'private_key_sealed', 'fingerprint', 'not_after'])
    .where('hostname', '=', hostname)
    .where('certificate', 'is not', null)
    .executeTakeFirst();
}

/** A challenge's key authorization, if the agent serves the host it was made for. */
export async function challengeFor(
  q: Queryable,
  agentId: string,
  token: string,
  appsDomain: string,
) {
  const c = await q
    .selectFrom('acme_challenges')
    .select(['hostname', 'key_authorization'])
    .where('token', '=', token)
    .executeTakeFirst();
  if (!c) return undefined;
  const served = await holders(q, c.hostname, appsDomain)
    .where('f.agent_id', '=', agentId)
    .executeTakeFirst();
  return served ? c.key_authorization : undefined;
}

export async function saveChallenge(
  q: Queryable,
  c: { token: string; hostname: string; keyAuthorization: string; now: Date },
) {
  await q
    .insertInto('acme_challenges')
    .values({
      token: c.token,
      hostname: c.hostname,
      key_authorization: c.keyAuthorization,
      created_at: c.now,
    })
    .onConflict((oc) => oc.column('token').doNothing())
    .execute();
}

export async function deleteChallenge(q: Queryable, token: string) {
  await q.deleteFrom('acme_challenges').where('token', '=', token).execute();
}

/** Challenges left by orders that never finished (a process killed mid-order). */
export async function pruneChallenges(q: Queryable, before: Date) {
  await q.deleteFrom('acme_challenges').where('created_at', '<', before).execute();
}

export function findAccount(q: Queryable, directoryUrl: string) {
  return q
    .selectFrom('acme_accounts')
    .selectAll()
    .where('directory_url', '=', directoryUrl)
    .executeTakeFirst();
}

/** Keeps the first account saved for a directory; answers the one kept. */
export async function saveAccount(
  q: Queryable,
  a: { directoryUrl: string; keySealed: string; url: string | null; now: Date },
) {
  await q
    .insertInto('acme_accounts')
    .values({
      directory_url: a.directoryUrl,
      account_key_sealed: a.keySealed,
      account_url: a.url,
      created_at: a.now,
    })
    .onConflict((oc) => oc.column('directory_url').doNothing())
    .execute();
  return findAccount(q, a.directoryUrl);
}

/** What the host's row says now (tests, and the service's own log). */
export function certificateRow(q: Queryable, hostname: string) {
  return q
    .selectFrom('edge_certificates')
    .selectAll()
    .where('hostname', '=', hostname)
    .executeTakeFirst();
}
