// Builds every service from the shared parts. Each service receives only what it uses.
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import type { Sealer } from './secrets.ts';
import { createAccessService } from './access/access-service.ts';
import { rateLimiter } from './http/rate-limit.ts';
import { createIdentityService } from './identity/identity-service.ts';
import { createTokenCache } from './identity/token-cache.ts';
import { createMemos } from './memo.ts';
import { createRoleMemo } from './access/role-memo.ts';
import { createRevocations } from './identity/revocations.ts';
import { revokedTokenIds } from './identity/identity-dal.ts';
import { createSignupService } from './identity/signup-service.ts';
import { createProjectsService } from './projects/projects-service.ts';
import { createTeamsService } from './teams/teams-service.ts';
import { createMembersService } from './teams/members-service.ts';
import { createInvitationsService } from './teams/invitations-service.ts';
import { createInvitationAnswers } from './teams/invitation-answers.ts';
import { createGrantsService } from './teams/grants-service.ts';
import { createOrgsService } from './orgs/orgs-service.ts';
import { createOrgInvitationsService } from './orgs/org-invitations.ts';
import { createAuditService } from './audit/audit-service.ts';
import type { Notifier } from './db/notifier.ts';
import { createWaker } from './db/waker.ts';
import { createAgentsService } from './agent-api/agents-service.ts';
import { createSyncService } from './agent-api/sync-service.ts';
import { createAgentCertificates } from './certificates/agent-certificates.ts';
import { createFramesService } from './frames/frames-service.ts';
import { createFrameOpsService } from './frames/frame-ops-service.ts';
import { createReleaseHistory } from './deployments/release-history.ts';
import { createPreviewsService } from './previews/previews-service.ts';
import { createHistoryService } from './history/history-service.ts';
import { createFrameMetricsService } from './frame-metrics/frame-metrics-service.ts';
import { createClosedSteps } from './frame-metrics/closed-steps.ts';
import { createProjectEventsService } from './history/project-events-service.ts';
import { createEnvService } from './env/env-service.ts';
import { createDomainsService } from './domains/domains-service.ts';
import { systemTxtResolver, type TxtResolver } from './domains/domain-verification.ts';
import { createVolumesService } from './volumes/volumes-service.ts';
import { createSweeper } from './jobs/sweeper.ts';
import { createBillingService } from './admin/billing-service.ts';
import { createTransfersService } from './admin/transfers-service.ts';
import { createWebhookService } from './webhooks/webhook-service.ts';
import { createMetrics } from './metrics/metrics.ts';
import { createNotificationsService } from './notifications/notifications-service.ts';
import { createNotificationsLog } from './notifications/notifications-log.ts';
import { createNotificationDelivery } from './notifications/delivery.ts';

export interface Core {
  config: Config;
  db: Database;
  clock: Clock;
  sealer: Sealer;
  notifier?: Notifier;
  /** DNS for domain verification; the system's resolver unless given (tests give a table). */
  dns?: TxtResolver;
}

export function createServices(core: Core) {
  const { config, db, clock, sealer, notifier } = core;
  const dns = core.dns ?? systemTxtResolver({ servers: config.dnsServers });
  // Every memo, on or off together (MEMO; memo.ts lists them and what makes each stale).
  const memos = createMemos(config.memo === 'on');
  const access = createAccessService(db, createRoleMemo(memos));
  const limiter = rateLimiter(db, clock);
  const offlineAfterSeconds = config.agentOfflineAfterSeconds;
  const { deploymentHistory } = config.growth;
  const frames = createFramesService({
    db,
    clock,
    access,
    sealer,
    notifier,
    offlineAfterSeconds,
    deploymentHistory,
    appsDomain: config.appsDomain,
    tls: config.acme !== undefined,
    memos,
  });
  const sweeper = createSweeper({
    db,
    clock,
    logRetention: config.growth.logRetention,
    metricsRetention: config.growth.metricsRetention,
  });
  const metrics = createMetrics({ db, clock, offlineAfterSeconds });
  const revocations = createRevocations(notifier, {
    load: () => revokedTokenIds(db, clock.now()),
    memos,
  });
  const tokens = createTokenCache(notifier, revocations, memos);
  const waker = createWaker(db);
  const notificationJobs = createNotificationDelivery({
    db,
    clock,
    sealer,
    access,
    settings: config.notifications,
    publicUrl: config.publicUrl,
  });
  const identity = createIdentityService({ db, clock, config, limiter, tokens, sealer });
  // One invitation mechanism, built for each kind of membership (teams/kinds.ts).
  const invitationDeps = {
    db,
    clock,
    access,
    sealer,
    limiter,
    publicUrl: config.publicUrl,
    acceptsPerIp: config.rateLimits.acceptsPerIp,
    mailLimits: {
      perTeamHour: config.rateLimits.invitationEmailsPerTeam,
      perAddressDay: config.rateLimits.invitationEmailsPerAddress,
    },
    users: identity,
  };
  return {
    access,
    identity,
    signup: createSignupService({ db, clock, config, limiter, sealer, tokens }),
    projects: createProjectsService({ db, clock, access }),
    teams: createTeamsService({ db, clock, access }),
    members: createMembersService({ db, clock, access, memos }),
    invitations: createInvitationsService(invitationDeps),
    invitationAnswers: createInvitationAnswers({ db, clock }),
    orgs: createOrgsService({ db, clock, access }),
    orgMembers: createMembersService({ db, clock, access, kind: 'org', memos }),
    orgInvitations: createOrgInvitationsService(
      createInvitationsService({ ...invitationDeps, kind: 'org' }),
    ),
    grants: createGrantsService({ db, clock, access }),
    audit: createAuditService({ db, access }),
    agents: createAgentsService({
      db,
      clock,
      access,
      offlineAfterSeconds,
      publicUrl: config.publicUrl,
    }),
    sync: createSyncService({
      db,
      clock,
      sealer,
      notifier,
      offlineAfterSeconds,
      schedulePullCheck: sweeper.schedulePullCheck,
      envCacheMaxBytes: config.growth.envCacheMaxBytes,
      appsDomain: config.appsDomain,
      memos,
      longPolls: metrics.held.agentSync,
    }),
    agentCertificates: createAgentCertificates({ db, sealer, appsDomain: config.appsDomain }),
    frames,
    frameOps: createFrameOpsService({
      db,
      clock,
      access,
      sealer,
      waker,
      frames,
      offlineAfterSeconds,
      deploymentHistory,
      releasesKept: config.growth.releasesKept,
    }),
    releaseHistory: createReleaseHistory({ db, access, sealer, frames }),
    previews: createPreviewsService({ db, access, frames }),
    history: createHistoryService({ db, clock, access, frames, notifier }),
    frameMetrics: createFrameMetricsService({
      db,
      clock,
      access,
      minuteRetentionHours: config.growth.metricsRetention.minuteHours,
      closedSteps: createClosedSteps(memos),
    }),
    projectEvents: createProjectEventsService({ db, clock, access, notifier }),
    env: createEnvService({
      db,
      clock,
      access,
      sealer,
      frames,
      maxBytes: config.growth.envMaxBytes,
      deploymentHistory,
    }),
    domains: createDomainsService({
      db,
      clock,
      access,
      frames,
      dns,
      appsDomain: config.appsDomain,
    }),
    volumes: createVolumesService({ db, clock, access, frames, sealer, deploymentHistory }),
    billing: createBillingService({ db, clock }),
    transfers: createTransfersService({ db, clock }),
    webhooks: createWebhookService({
      db,
      clock,
      access,
      sealer,
      publicUrl: config.publicUrl,
      deploymentHistory,
    }),
    notifications: createNotificationsService({
      db,
      clock,
      access,
      sealer,
      settings: config.notifications,
    }),
    notificationsLog: createNotificationsLog({ db, clock, access }),
    /** The deliver_notification job (jobs/worker.ts). */
    notificationJobs,
    // The time rules that the operator's clock advance runs at once: the sweep's, and the
    // notification retries that have fallen due.
    timeRules: {
      ...sweeper,
      async runDue(now: Date = clock.now()) {
        await sweeper.runDue(now);
        await notificationJobs.queueDue(now);
      },
    },
    /** Wake-ups sent after commit; flushed when the app closes. */
    waker,
    /** The service's own metrics (GET /metrics). */
    metrics,
    /** Which tokens are revoked, known without the database once loaded (tests wait on it). */
    revocations,
  };
}

export type Services = ReturnType<typeof createServices>;
