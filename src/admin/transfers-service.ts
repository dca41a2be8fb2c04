// Ownership transfers (CONTRACT 7): the spec keeps them out of self-service, so only the operator
// moves an owner. Each transfer is one transaction that says it is one (markOwnerTransfer) and is
// audited in it; the database keeps "exactly one owner" true at every instant (team_members_guard,
// teams_have_owner), and locks order concurrent transfers.
//
// Lock order, the same in every transfer and compatible with billing (billing-service.ts) and the
// agent sync: team/org rows (FOR UPDATE to transfer one, FOR SHARE to read an org's billing, in id
// order) → the project → users (FOR SHARE, in id order) → frames (in id order).
import type { Clock } from '../clock.ts';
import { transaction, type Database, type Queryable } from '../db/database.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { conflict, fieldError, notFound } from '../errors.ts';
import { type BillingStatus, lockFramesIn, lockPayer, type Payer } from './billing-dal.ts';
import { billingChanged } from './billing-service.ts';
import {
  lockMember,
  lockProjectOwner,
  lockTeamOfKind,
  markOwnerTransfer,
  moveTeamOwner,
  projectOwner,
  setProjectOwner,
} from './transfers-dal.ts';

/** Who asked: the operator has no user id; its audit rows carry the request id. */
export interface OperatorCall {
  requestId: string;
}

export type NewProjectOwner = { user_id?: string; org_id?: string };

/** The payer named by a transfer body: exactly one of user_id and org_id. */
export function newOwnerOf(body: NewProjectOwner): Payer {
  if (body.user_id !== undefined && body.org_id === undefined)
    return { kind: 'user', id: body.user_id };
  if (body.org_id !== undefined && body.user_id === undefined)
    return { kind: 'org', id: body.org_id };
  throw fieldError(
    body.user_id === undefined ? 'user_id' : 'org_id',
    'one_owner_required',
    'Send exactly one of user_id (a user owns the project) and org_id (an organization does).',
  );
}

const payerOf = (p: { owner_id: string | null; org_id: string | null }): Payer =>
  p.org_id !== null ? { kind: 'org', id: p.org_id } : { kind: 'user', id: p.owner_id ?? '' };

const samePayer = (a: Payer, b: Payer) => a.kind === b.kind && a.id === b.id;

/** As the project representation says it (CONTRACT 3a): owner_id is the user's or the org's id. */
const shown = (p: Payer) => ({ owner_kind: p.kind, owner_id: p.id });

/** The project's owner changed between the unlocked read and the lock: run the transfer again. */
class OwnerMoved extends Error {}

/** Locks the payers' rows in the order of the file's header; their billing, by id. */
async function lockPayers(trx: Queryable, payers: Payer[]) {
  const status = new Map<string, BillingStatus>();
  const order = (kind: Payer['kind']) =>
    [...new Set(payers.filter((p) => p.kind === kind).map((p) => p.id))].sort();
  for (const kind of ['org', 'user'] as const)
    for (const id of order(kind)) {
      const row = await lockPayer(trx, { kind, id }, 'read');
      if (row) status.set(id, row.billing_status);
    }
  return status;
}

export function createTransfersService({ db, clock }: { db: Database; clock: Clock }) {
  async function moveMembershipOwner(
    kind: 'team' | 'org',
    teamId: string,
    userId: string,
    call: OperatorCall,
  ) {
    const now = clock.now();
    return transaction(db, async (trx) => {
      await markOwnerTransfer(trx);
      const team = await lockTeamOfKind(trx, teamId, kind);
      if (!team) throw notFound(kind);
      if (!(await lockMember(trx, teamId, userId)))
        throw fieldError(
          'user_id',
          'not_a_member',
          `The new owner must already be a member of the ${kind === 'org' ? 'organization' : 'team'}: invite them first.`,
        );
      const previous = team.owner_id;
      // Already the owner: nothing changes and nothing is recorded.
      if (previous !== userId) {
        await moveTeamOwner(trx, teamId, previous, userId);
        await recordAudit(trx, { userId: null, requestId: call.requestId }, now, {
          teamId,
          action: `${kind}.owner_transferred`,
          targetType: kind,
          targetId: teamId,
          before: { owner_id: previous },
          after: { owner_id: userId, previous_owner_role: 'admin' },
        });
      }
      return { owner_id: userId, previous_owner_id: previous };
    });
  }

  async function moveProject(trx: Queryable, projectId: string, to: Payer, call: OperatorCall) {
    const now = clock.now();
    await markOwnerTransfer(trx);
    const seen = await projectOwner(trx, projectId);
    if (!seen) throw notFound('project');
    const from = payerOf(seen);
    // The orgs are locked before the project (header), so the old owner is read first, unlocked,
    // and checked again once the project is locked.
    const orgs = await lockPayers(
      trx,
      [from, to].filter((p) => p.kind === 'org'),
    );
    const locked = await lockProjectOwner(trx, projectId);
    if (!locked) throw notFound('project');
    if (!samePayer(payerOf(locked), from)) throw new OwnerMoved();
    const users = await lockPayers(
      trx,
      [from, to].filter((p) => p.kind === 'user'),
    );
    const billing = (p: Payer) => (p.kind === 'org' ? orgs : users).get(p.id);
    const toStatus = billing(to);
    if (!toStatus)
      throw to.kind === 'user'
        ? fieldError('user_id', 'unknown_user', 'No such user.')
        : fieldError(
            'org_id',
            'unknown_org',
            'No such organization (a team cannot own projects; only a user or an organization can).',
          );
    const result = { project_id: projectId, ...shown(to), previous: shown(from) };
    if (samePayer(from, to)) return { ...result, frames_affected: 0 };

    // The frames keep their desired state: a transfer neither stops nor restarts them. Only when
    // the new payer's billing differs are they suspended or restored, as billing would do.
    const moves = billing(from) !== toStatus;
    if (moves) await lockFramesIn(trx, { kind: 'project', id: projectId });
    await setProjectOwner(trx, projectId, {
      owner_id: to.kind === 'user' ? to.id : null,
      org_id: to.kind === 'org' ? to.id : null,
    });
    const framesAffected = moves
      ? await billingChanged(trx, { kind: 'project', id: projectId }, toStatus, now)
      : 0;
    await recordAudit(trx, { userId: null, requestId: call.requestId }, now, {
      projectId,
      // The org's own log shows the projects it gains or loses.
      teamId: to.kind === 'org' ? to.id : from.kind === 'org' ? from.id : null,
      action: 'project.owner_transferred',
      targetType: 'project',
      targetId: projectId,
      before: shown(from),
      after: { ...shown(to), frames_affected: framesAffected },
    });
    return { ...result, frames_affected: framesAffected };
  }

  return {
    transferTeam: (teamId: string, userId: string, call: OperatorCall) =>
      moveMembershipOwner('team', teamId, userId, call).then((r) => ({ team_id: teamId, ...r })),

    transferOrg: (orgId: string, userId: string, call: OperatorCall) =>
      moveMembershipOwner('org', orgId, userId, call).then((r) => ({ org_id: orgId, ...r })),

    async transferProject(projectId: string, body: NewProjectOwner, call: OperatorCall) {
      const to = newOwnerOf(body);
      // A concurrent transfer of the same project can move its owner between the unlocked read
      // and the lock. Each run that loses waited for one that committed, so a run is lost only
      // to another transfer of this project that succeeded.
      for (let run = 0; run < 10; run++) {
        try {
          return await transaction(db, (trx) => moveProject(trx, projectId, to, call));
        } catch (e) {
          if (!(e instanceof OwnerMoved)) throw e;
        }
      }
      throw conflict(
        'transfer_conflict',
        'The project changed owner while it was being transferred; try again.',
      );
    },
  };
}

export type TransfersService = ReturnType<typeof createTransfersService>;
