// Memberships (spec 4) with the owner guardrails of spec 3, of a team or of an organization
// (kinds.ts): one service, built once per kind. The database enforces the same guardrails
// (team_members_guard), so a race can never produce zero or two owners.
import type { Database } from '../db/database.ts';
import { transaction } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import type { Role } from '../access/roles.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { notFound, ownerImmutable } from '../errors.ts';
import { iso } from '../http/schemas.ts';
import { decodeCursor, toPage } from '../paging.ts';
import * as dal from './teams-dal.ts';
import { createMemberPages } from './member-pages.ts';
import { decideOfKind, type Kind, KIND_NOUN, refuseRole, requireOfKind } from './kinds.ts';

interface MemberRow {
  user_id: string;
  email: string;
  name: string;
  role: Role;
  joined_at: Date;
}
export const presentMember = (m: MemberRow) => ({
  user_id: m.user_id,
  email: m.email,
  name: m.name,
  role: m.role,
  joined_at: iso(m.joined_at),
});

interface Deps {
  db: Database;
  clock: Clock;
  access: Pick<AccessService, 'requireTeam' | 'requireOrg'>;
  /** Whose members: a team's (the default) or an organization's. */
  kind?: Kind;
}

export function createMembersService({ db, clock, access, kind = 'team' }: Deps) {
  const pages = createMemberPages<ReturnType<typeof presentMember>>();
  const requireKind = requireOfKind(access, kind);
  const decideKind = decideOfKind(kind);
  async function target(teamId: string, userId: string) {
    const m = await dal.member(db, teamId, userId);
    if (!m) throw notFound('member');
    if (m.role === 'owner')
      throw ownerImmutable(
        `The ${KIND_NOUN[kind]} owner's membership cannot be changed or removed.`,
      );
    return m;
  }

  return {
    async list(actor: Actor, teamId: string, limit: number, cursor?: string) {
      // The first part is a time: a cursor whose time is not one is not a cursor we issued.
      const after = decodeCursor(
        cursor,
        2,
        ([at]) => at !== undefined && !Number.isNaN(Date.parse(at)),
      ) as [string, string] | undefined;
      if (!pages.has(teamId, limit, cursor)) {
        // Nothing to reuse: the access check and the page in one statement.
        const rows = await dal.membersWithCaller(db, teamId, kind, actor.userId, limit, after);
        decideKind(rows[0]?.caller_role, 'members.read');
        const version = rows[0]?.members_version ?? 0;
        const shown = rows.filter((r): r is typeof r & MemberRow => r.user_id !== null);
        const page = toPage(shown, limit, (m) => [iso(m.joined_at), m.user_id], presentMember);
        pages.set(teamId, version, limit, cursor, page);
        return page;
      }
      // The access check reads the team's members_version too: a page read at that version is
      // still exact (member-pages.ts).
      const team = await requireKind(actor.userId, teamId, 'members.read');
      const known = pages.get(teamId, team.members_version, limit, cursor);
      if (known) return known;
      const rows = await dal.listMembers(db, teamId, limit, after);
      const page = toPage(rows, limit, (m) => [iso(m.joined_at), m.user_id], presentMember);
      pages.set(teamId, team.members_version, limit, cursor, page);
      return page;
    },

    async changeRole(actor: Actor, teamId: string, userId: string, input: { role: Role }) {
      await requireKind(actor.userId, teamId, 'members.manage');
      refuseRole(kind, input.role);
      const before = await target(teamId, userId);
      return transaction(db, async (trx) => {
        const role = await dal.setMemberRole(trx, teamId, userId, input.role);
        if (!role) throw notFound('member');
        await recordAudit(trx, actor, clock.now(), {
          teamId,
          action: 'member.role_changed',
          targetType: 'member',
          targetId: userId,
          before: { role: before.role },
          after: { role },
        });
        return presentMember({ ...before, role });
      });
    },

    async remove(actor: Actor, teamId: string, userId: string) {
      await requireKind(actor.userId, teamId, 'members.manage');
      const before = await target(teamId, userId);
      await transaction(db, async (trx) => {
        if (!(await dal.deleteMember(trx, teamId, userId))) throw notFound('member');
        await recordAudit(trx, actor, clock.now(), {
          teamId,
          action: 'member.removed',
          targetType: 'member',
          targetId: userId,
          before: { role: before.role, email: before.email },
        });
      });
    },
  };
}

export type MembersService = ReturnType<typeof createMembersService>;
