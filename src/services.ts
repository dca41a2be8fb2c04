// Builds every service from the shared parts. Each service receives only what it uses.
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import type { Sealer } from './secrets.ts';
import { createAccessService } from './access/access-service.ts';
import { rateLimiter } from './http/rate-limit.ts';
import { createIdentityService } from './identity/identity-service.ts';
import { createProjectsService } from './projects/projects-service.ts';
import { createTeamsService } from './teams/teams-service.ts';
import { createMembersService } from './teams/members-service.ts';
import { createInvitationsService } from './teams/invitations-service.ts';
import { createGrantsService } from './teams/grants-service.ts';

export interface Core { config: Config; db: Database; clock: Clock; sealer: Sealer }

export function createServices({ config, db, clock, sealer }: Core) {
  const access = createAccessService(db);
  const limiter = rateLimiter(db, clock);
  return {
    access,
    identity: createIdentityService({ db, clock, config, limiter }),
    projects: createProjectsService({ db, clock, access }),
    teams: createTeamsService({ db, clock, access }),
    members: createMembersService({ db, clock, access }),
    invitations: createInvitationsService({
      db, clock, access, sealer, limiter, publicUrl: config.publicUrl, acceptsPerIp: config.rateLimits.acceptsPerIp,
    }),
    grants: createGrantsService({ db, clock, access }),
    // Time rules that the operator's clock advance runs at once (issue 3 adds frame rules).
    timeRules: { async runDue(_now: Date) {} },
  };
}

export type Services = ReturnType<typeof createServices>;
