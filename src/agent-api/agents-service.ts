// Agents (CONTRACT 6): the runtime. Self-hosted agents belong to a project; cloud agents are
// registered by the operator and carry every cloud frame. Tokens are shown once, stored hashed.
import { sql } from 'kysely';
import { transaction, type Database, type Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { conflict, notFound } from '../http/errors.ts';
import { iso, isoOrNull } from '../http/schemas.ts';
import { newId } from '../ids.ts';
import { hashSecret, newSecret } from '../secrets.ts';
import { notifyAgents, refreshStatus } from '../frames/frame-events.ts';
import { pageById } from '../db/paging.ts';

export interface AgentRow {
  id: string;
  kind: 'cloud' | 'self_hosted';
  project_id: string | null;
  name: string;
  created_at: Date;
  last_seen_at: Date | null;
}
export interface AgentIdentity {
  id: string;
  kind: 'cloud' | 'self_hosted';
  project_id: string | null;
}

interface Deps {
  db: Database;
  clock: Clock;
  access: AccessService;
  offlineAfterSeconds: number;
}

export function createAgentsService({ db, clock, access, offlineAfterSeconds }: Deps) {
  const isOnline = (lastSeen: Date | null, now = clock.now()) =>
    lastSeen !== null && now.getTime() - lastSeen.getTime() <= offlineAfterSeconds * 1000;
  const present = (a: AgentRow) => ({
    id: a.id,
    name: a.name,
    kind: a.kind,
    project_id: a.project_id,
    online: isOnline(a.last_seen_at),
    last_seen_at: isoOrNull(a.last_seen_at),
    created_at: iso(a.created_at),
  });

  async function register(kind: AgentRow['kind'], projectId: string | null, name: string) {
    const token = newSecret('fpa');
    const now = clock.now();
    const row = await transaction(db, async (trx) => {
      const agent = await trx
        .insertInto('agents')
        .values({
          id: newId('agent', now),
          kind,
          project_id: projectId,
          name,
          token_hash: hashSecret(token),
          created_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      if (kind === 'cloud') await placeUnplacedFrames(trx, now);
      return agent;
    });
    return { ...present(row), token };
  }

  return {
    isOnline,
    present,

    async registerSelfHosted(actor: Actor, projectId: string, input: { name: string }) {
      await access.requireProject(actor.userId, projectId, 'agent.manage');
      const created = await register('self_hosted', projectId, input.name);
      await recordAudit(db, actor, clock.now(), {
        projectId,
        action: 'agent.created',
        targetType: 'agent',
        targetId: created.id,
        after: { name: input.name },
      });
      return created;
    },

    registerCloud: (input: { name: string }) => register('cloud', null, input.name),

    async list(actor: Actor, projectId: string, limit: number, cursor?: string) {
      await access.requireProject(actor.userId, projectId, 'project.read');
      return pageById(
        db.selectFrom('agents').selectAll().where('project_id', '=', projectId),
        limit,
        cursor,
        present,
      );
    },

    async remove(actor: Actor, projectId: string, agentId: string) {
      await access.requireProject(actor.userId, projectId, 'agent.manage');
      await transaction(db, async (trx) => {
        const agent = await trx
          .selectFrom('agents')
          .select('id')
          .where('id', '=', agentId)
          .where('project_id', '=', projectId)
          .forUpdate()
          .executeTakeFirst();
        if (!agent) throw notFound('agent');
        const used = await trx
          .selectFrom('frames')
          .select('id')
          .where('agent_id', '=', agentId)
          .limit(1)
          .executeTakeFirst();
        if (used)
          throw conflict(
            'agent_in_use',
            'Frames run on this agent; delete them or move them first.',
          );
        await trx.deleteFrom('agents').where('id', '=', agentId).execute();
        await recordAudit(trx, actor, clock.now(), {
          projectId,
          action: 'agent.deleted',
          targetType: 'agent',
          targetId: agentId,
        });
      });
    },

    async authenticate(token: string): Promise<AgentIdentity | undefined> {
      return db
        .selectFrom('agents')
        .select(['id', 'kind', 'project_id'])
        .where('token_hash', '=', hashSecret(token))
        .executeTakeFirst();
    },
  };
}

/** The cloud agent with the fewest frames, or null while the operator has registered none. */
export async function leastLoadedCloudAgent(q: Queryable): Promise<string | null> {
  const row = await q
    .selectFrom('agents as a')
    .select('a.id')
    .where('a.kind', '=', 'cloud')
    .orderBy(sql`(select count(*) from frames f where f.agent_id = a.id)`)
    .orderBy('a.id')
    .limit(1)
    .executeTakeFirst();
  return row?.id ?? null;
}

/** Places cloud frames created while no cloud agent existed. */
export async function placeUnplacedFrames(q: Queryable, now: Date) {
  const unplaced = await q
    .selectFrom('frames')
    .select('id')
    .where('runtime_kind', '=', 'cloud')
    .where('agent_id', 'is', null)
    .forUpdate()
    .execute();
  const placed: string[] = [];
  for (const f of unplaced) {
    const agentId = await leastLoadedCloudAgent(q);
    if (!agentId) return;
    await q
      .updateTable('frames')
      .set({ agent_id: agentId, generation: sql`generation + 1` })
      .where('id', '=', f.id)
      .execute();
    placed.push(agentId);
  }
  await notifyAgents(q, placed);
  await refreshStatus(
    q,
    unplaced.map((f) => f.id),
    now,
  );
}

export type AgentsService = ReturnType<typeof createAgentsService>;
