// Agents (CONTRACT 6): the runtime. Self-hosted agents belong to a project; cloud agents are
// registered by the operator and carry every cloud frame. Tokens are shown once, stored hashed.
import { transaction, type Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { conflict, notFound } from '../errors.ts';
import { iso, isoOrNull } from '../http/schemas.ts';
import { newId } from '../ids.ts';
import { hashSecret, newSecret } from '../secrets.ts';
import { placeUnplacedFrames } from '../frames/placement.ts';
import { pageById } from '../db/paging.ts';
import {
  agentByTokenHash,
  agentRunsFrames,
  agentsOfProject,
  deleteAgent,
  insertAgent,
  lockProjectAgent,
} from './agents-dal.ts';

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
  /** Where agents reach the service, and download the command (PUBLIC_URL). */
  publicUrl: string;
}

/** The rule of `online`: seen at or after this moment (AGENT_OFFLINE_AFTER_SECONDS ago). The
 *  metrics count agents online by it too (metrics/collectors.ts). */
export const onlineSince = (now: Date, offlineAfterSeconds: number) =>
  new Date(now.getTime() - offlineAfterSeconds * 1000);

export function createAgentsService({ db, clock, access, offlineAfterSeconds, publicUrl }: Deps) {
  // The package the service serves itself (src/downloads): `npx frameplane` would ask the
  // public registry for a name that anyone could claim.
  const packageUrl = `${publicUrl}/downloads/frameplane.tgz`;
  const install = (token: string) => ({
    package_url: packageUrl,
    checksum_url: `${packageUrl}.sha256`,
    command:
      `npm install -g ${packageUrl} && ` +
      `FRAMEPLANE_AGENT_TOKEN=${token} frameplane agent --server ${publicUrl}`,
  });
  const isOnline = (lastSeen: Date | null, now = clock.now()) =>
    lastSeen !== null && lastSeen >= onlineSince(now, offlineAfterSeconds);
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
      const agent = await insertAgent(trx, {
        id: newId('agent', now),
        kind,
        project_id: projectId,
        name,
        token_hash: hashSecret(token),
        created_at: now,
      });
      if (kind === 'cloud') await placeUnplacedFrames(trx, now);
      return agent;
    });
    return { ...present(row), token, install: install(token) };
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
      return pageById(agentsOfProject(db, projectId), limit, cursor, present);
    },

    async remove(actor: Actor, projectId: string, agentId: string) {
      await access.requireProject(actor.userId, projectId, 'agent.manage');
      await transaction(db, async (trx) => {
        if (!(await lockProjectAgent(trx, projectId, agentId))) throw notFound('agent');
        if (await agentRunsFrames(trx, agentId))
          throw conflict(
            'agent_in_use',
            'Frames run on this agent; delete them or move them first.',
          );
        await deleteAgent(trx, agentId);
        await recordAudit(trx, actor, clock.now(), {
          projectId,
          action: 'agent.deleted',
          targetType: 'agent',
          targetId: agentId,
        });
      });
    },

    async authenticate(token: string): Promise<AgentIdentity | undefined> {
      return agentByTokenHash(db, hashSecret(token));
    },
  };
}

export type AgentsService = ReturnType<typeof createAgentsService>;
