// Builds every service from the shared parts. Each service receives only what it uses.
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import type { Sealer } from './secrets.ts';
import { createAccessService } from './access/access-service.ts';
import { rateLimiter } from './http/rate-limit.ts';
import { createIdentityService } from './identity/identity-service.ts';
import { createTokenCache } from './identity/token-cache.ts';
import { createProjectsService } from './projects/projects-service.ts';
import { createTeamsService } from './teams/teams-service.ts';
import { createMembersService } from './teams/members-service.ts';
import { createInvitationsService } from './teams/invitations-service.ts';
import { createGrantsService } from './teams/grants-service.ts';
import type { Notifier } from './db/notifier.ts';
import { createAgentsService } from './agent-api/agents-service.ts';
import { createSyncService } from './agent-api/sync-service.ts';
import { createFramesService } from './frames/frames-service.ts';
import { createFrameOpsService } from './frames/frame-ops-service.ts';
import { createHistoryService } from './frames/history-service.ts';
import { createEnvService } from './frames/env-service.ts';
import { createDomainsService } from './frames/domains-service.ts';
import { createVolumesService } from './frames/volumes-service.ts';
import { createSweeper } from './jobs/sweeper.ts';
import { createBillingService } from './admin/billing-service.ts';
import { createWebhookService } from './hooks/webhook-service.ts';

export interface Core { config: Config; db: Database; clock: Clock; sealer: Sealer; notifier?: Notifier }

export function createServices({ config, db, clock, sealer, notifier }: Core) {
  const access = createAccessService(db);
  const limiter = rateLimiter(db, clock);
  const offlineAfterSeconds = config.agentOfflineAfterSeconds;
  const frames = createFramesService({ db, clock, access, sealer, notifier, offlineAfterSeconds });
  const sweeper = createSweeper({ db, clock });
  return {
    access,
    identity: createIdentityService({ db, clock, config, limiter, tokens: createTokenCache(notifier) }),
    projects: createProjectsService({ db, clock, access }),
    teams: createTeamsService({ db, clock, access }),
    members: createMembersService({ db, clock, access }),
    invitations: createInvitationsService({
      db, clock, access, sealer, limiter, publicUrl: config.publicUrl, acceptsPerIp: config.rateLimits.acceptsPerIp,
      mailLimits: { perTeamHour: config.rateLimits.invitationEmailsPerTeam, perAddressDay: config.rateLimits.invitationEmailsPerAddress },
    }),
    grants: createGrantsService({ db, clock, access }),
    agents: createAgentsService({ db, clock, access, offlineAfterSeconds }),
    sync: createSyncService({ db, clock, sealer, notifier, offlineAfterSeconds, schedulePullCheck: sweeper.schedulePullCheck }),
    frames,
    frameOps: createFrameOpsService({ db, clock, access, sealer, frames, offlineAfterSeconds }),
    history: createHistoryService({ db, clock, access, frames, notifier }),
    env: createEnvService({ db, clock, access, sealer, frames }),
    domains: createDomainsService({ db, clock, access, frames }),
    volumes: createVolumesService({ db, clock, access, frames }),
    billing: createBillingService({ db, clock }),
    webhooks: createWebhookService({ db, clock, access, sealer, publicUrl: config.publicUrl }),
    // The time rules that the operator's clock advance runs at once.
    timeRules: sweeper,
  };
}

export type Services = ReturnType<typeof createServices>;
