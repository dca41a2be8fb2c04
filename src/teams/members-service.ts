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
import { notifyOfMembership } from '../notifications/notify.ts';
import { decodeCursor, toPage } from '../paging.ts';
import * as dal from './teams-dal.ts';
import { createMemberRosters } from './member-rosters.ts';
import type { Memos } from '../memo.ts';
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
  memos?: Memos;
}

export function createMembersService({ db, clock, access, kind = 'team', memos }: Deps) {
  const keyOf = (m: MemberRow) => [iso(m.joined_at), m.user_id];
  // A roster that fails to load leaves its pages to the database, which reports its own errors.
  const rosters = createMemberRosters(
    async (teamId, max) => {
      const rows = await dal.memberRoster(db, teamId, kind, max + 1);
      return {
        version: rows[0]?.members_version ?? -1,
        members: rows.filter((r): r is typeof r & MemberRow => r.user_id !== null),
      };
    },
    (m: MemberRow) => ({ item: presentMember(m), key: keyOf(m) }),
    { memos },
  );
  /** A page read from the database. A list that fits on one page is not worth a roster. */
  function missed(
    team: { id: string; members_version: number; member_count: number },
    cursor: string | undefined,
    rows: MemberRow[],
    limit: number,
  ) {
    const page = toPage(rows, limit, keyOf, presentMember);
    if (cursor !== undefined || page.next_cursor !== null)
      rosters.missed(team.id, team.members_version, page.data.length, team.member_count);
    return page;
  }
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
      if (!rosters.has(teamId)) {
        // Nothing to reuse: the access check and the page in one statement.
        const rows = await dal.membersWithCaller(db, teamId, kind, actor.userId, limit, after);
        decideKind(rows[0]?.caller_role, 'members.read');
        const shown = rows.filter((r): r is typeof r & MemberRow => r.user_id !== null);
        const first = rows[0];
        const team = {
          id: teamId,
          members_version: first?.members_version ?? 0,
          member_count: first?.member_count ?? 0,
        };
        return missed(team, cursor, shown, limit);
      }
      // The access check reads the team's members_version too: a roster read at that version
      // is still exact (member-rosters.ts).
      const team = await requireKind(actor.userId, teamId, 'members.read');
      const held = rosters.page(teamId, team.members_version, limit, after);
      if (held !== undefined) return held;
      const rows = await dal.listMembers(db, teamId, limit, after);
      return missed(team, cursor, rows, limit);
    },

    /** Resolves when no roster is being read (tests, before they look at a roster's effect). */
    settled: () => rosters.settled(),
    /** Members held in rosters, across teams (bounded by member-rosters.ts). */
    heldMembers: () => rosters.members,

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
        const gone = { teamId, userId, role: before.role, at: clock.now() };
        await notifyOfMembership(trx, { ...gone, change: 'removed' });
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
