// Reading the audit log: a team's or an org's to its admins, a project's to whoever may audit it.
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import type { Database } from '../db/database.ts';
import { iso } from '../http/schemas.ts';
import { decodeCursor, toPage } from '../paging.ts';
import { listAudit } from './audit-dal.ts';

type AuditRow = Awaited<ReturnType<typeof listAudit>>[number];

const presentEvent = (r: AuditRow) => ({
  id: r.id,
  action: r.action,
  actor_id: r.actor_id,
  target_type: r.target_type,
  target_id: r.target_id,
  before: r.before ?? null,
  after: r.after ?? null,
  request_id: r.request_id,
  at: iso(r.at),
});

interface Deps {
  db: Database;
  access: Pick<AccessService, 'requireTeam' | 'requireOrg' | 'requireProject'>;
}

export function createAuditService({ db, access }: Deps) {
  async function page(
    scope: Parameters<typeof listAudit>[1],
    limit: number,
    cursor: string | undefined,
  ) {
    const rows = await listAudit(db, scope, limit, decodeCursor(cursor, 1)?.[0]);
    return toPage(rows, limit, (r) => [r.id], presentEvent);
  }

  return {
    /** The team's log, newest first. */
    async ofTeam(actor: Actor, teamId: string, limit: number, cursor?: string) {
      await access.requireTeam(actor.userId, teamId, 'audit.read');
      return page({ teamId }, limit, cursor);
    },

    /** The org's log (the org, its members and invitations, projects moved in or out). */
    async ofOrg(actor: Actor, orgId: string, limit: number, cursor?: string) {
      await access.requireOrg(actor.userId, orgId, 'audit.read');
      return page({ teamId: orgId }, limit, cursor);
    },

    /** The project's log, newest first. */
    async ofProject(actor: Actor, projectId: string, limit: number, cursor?: string) {
      await access.requireProject(actor.userId, projectId, 'project.audit');
      return page({ projectId }, limit, cursor);
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
