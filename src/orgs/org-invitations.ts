// The org face of the one invitation mechanism: teams/invitations-service.ts built for kind
// 'org' (services.ts) does the work, rules and checks included; this only names the org's id
// `org_id` in what it answers, as the rest of /v2/orgs does.
import type { Actor } from '../actor.ts';
import type { Role } from '../access/roles.ts';
import type { InvitationsService } from '../teams/invitations-service.ts';
import type { Page } from '../paging.ts';

const asOrg = <T extends { team_id: string }>({ team_id, ...rest }: T) => ({
  org_id: team_id,
  ...rest,
});
const pageAsOrg = <T extends { team_id: string }>(p: Page<T>) => ({
  data: p.data.map(asOrg),
  next_cursor: p.next_cursor,
});

export function createOrgInvitationsService(invitations: InvitationsService) {
  return {
    list: async (actor: Actor, orgId: string, limit: number, cursor?: string) =>
      pageAsOrg(await invitations.list(actor, orgId, limit, cursor)),
    create: async (actor: Actor, orgId: string, input: { email: string; role: Role }) =>
      asOrg(await invitations.create(actor, orgId, input)),
    revoke: (actor: Actor, orgId: string, invitationId: string) =>
      invitations.revoke(actor, orgId, invitationId),
    resend: async (actor: Actor, orgId: string, invitationId: string) =>
      asOrg(await invitations.resend(actor, orgId, invitationId)),
    accept: async (actor: Actor, token: string) => asOrg(await invitations.accept(actor, token)),
    decline: (actor: Actor | undefined, token: string) => invitations.decline(actor, token),
  };
}

export type OrgInvitationsService = ReturnType<typeof createOrgInvitationsService>;
