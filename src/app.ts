// Builds the HTTP application. Plugins load in a fixed order: parsing and validation, security
// headers, OpenAPI, error mapping and auth, then the routes of each area.
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { randomUUID } from 'node:crypto';
import type { Core, Services } from './services.ts';
import { installErrorHandling, sendProblem } from './http/error-handler.ts';
import { AppError } from './errors.ts';
import { installAuth } from './http/auth.ts';
import { openapiOptions } from './http/openapi.ts';
import { installJsonParser } from './http/json-parser.ts';
import { installIdempotency } from './http/idempotency.ts';
import { learnRoute, logSerializers } from './http/log-redaction.ts';
import { installAccessLog } from './http/access-log.ts';
import { installSecurityHeaders } from './http/security-headers.ts';
import { IDEMPOTENCY_HOURS } from './jobs/sweeper.ts';
import { validatorCompiler } from './http/validation.ts';
import { Problem } from './http/schemas.ts';
import { healthRoutes } from './http/health-routes.ts';
import { identityRoutes } from './identity/identity-routes.ts';
import { User } from './identity/identity-schemas.ts';
import { projectRoutes } from './projects/projects-routes.ts';
import { Project, Space } from './projects/projects-schemas.ts';
import { teamRoutes } from './teams/teams-routes.ts';
import { invitationRoutes } from './teams/invitations-routes.ts';
import { grantRoutes } from './teams/grants-routes.ts';
import { Grant, Member, Team } from './teams/teams-schemas.ts';
import { Invitation } from './teams/invitation-schemas.ts';
import { orgRoutes } from './orgs/orgs-routes.ts';
import { orgInvitationRoutes } from './orgs/org-invitations-routes.ts';
import { Org, OrgInvitation } from './orgs/orgs-schemas.ts';
import { auditRoutes } from './audit/audit-routes.ts';
import { adminRoutes } from './admin/admin-routes.ts';
import { webRoutes } from './web/web-routes.ts';
import { type ConsoleBuild, consoleBuild, consoleRoutes } from './web/console-routes.ts';
import { downloadRoutes } from './downloads/downloads-routes.ts';
import { frameRoutes } from './frames/frames-routes.ts';
import { historyRoutes } from './history/history-routes.ts';
import { frameMetricsRoutes } from './frame-metrics/frame-metrics-routes.ts';
import { releaseRoutes } from './deployments/releases-routes.ts';
import { previewRoutes } from './previews/previews-routes.ts';
import { envRoutes } from './env/env-routes.ts';
import { domainRoutes } from './domains/domains-routes.ts';
import { volumeRoutes } from './volumes/volumes-routes.ts';
import { Frame } from './frames/frames-schemas.ts';
import { Deployment, Release, ReleaseChanges } from './deployments/releases-schemas.ts';
import { agentRoutes } from './agent-api/agents-routes.ts';
import { certificateRoutes } from './certificates/certificates-routes.ts';
import { webhookRoutes } from './webhooks/webhook-routes.ts';
import { notificationRoutes } from './notifications/notifications-routes.ts';
import { Agent } from './agent-api/agents-schemas.ts';
import { installRequestMetrics } from './metrics/request-metrics.ts';
import { metricsRoutes } from './metrics/metrics-routes.ts';

export interface AppOptions {
  logger?: Logger;
  isReady?: () => boolean;
  /** The web console's build; main.ts passes one to start building it at once. */
  console?: ConsoleBuild;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

// Answers the router gives before any hook runs (a URL it cannot decode) miss helmet's headers:
// they get this baseline, and the request id, by hand.
const BASELINE_HEADERS = {
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'SAMEORIGIN',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
};

export async function buildApp(core: Core, services: Services, opts: AppOptions = {}) {
  const app = Fastify({
    // Whatever logger is given, URLs are logged with their tokens redacted (http/log-redaction.ts).
    ...(opts.logger
      ? {
          loggerInstance: opts.logger.child(
            {},
            { serializers: logSerializers },
          ) as FastifyBaseLogger,
        }
      : { logger: false }),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: core.config.bodyLimitBytes,
    trustProxy: core.config.trustProxy,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : `req_${randomUUID()}`;
    },
    routerOptions: { maxParamLength: 512 },
    // Errors the router raises before any route runs are problems too: a path that cannot be
    // decoded is 400, a path parameter longer than any id is simply not found.
    frameworkErrors: (err, req, reply) =>
      sendProblem(
        reply.headers(BASELINE_HEADERS).header('x-request-id', req.id),
        err.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? new AppError(404, 'not_found', 'Not found', 'No such resource.')
          : new AppError(
              400,
              'bad_url',
              'Bad request',
              'The URL is not valid (bad percent-encoding).',
            ),
      ),
    return503OnClosing: true,
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Before any route: the log's redaction learns from each route which segments are secrets.
  app.addHook('onRoute', (route) => learnRoute(route.url));
  app.setValidatorCompiler(validatorCompiler);
  installJsonParser(app);
  for (const schema of [
    Problem,
    User,
    Project,
    Space,
    Team,
    Member,
    Grant,
    Invitation,
    Org,
    OrgInvitation,
    Frame,
    Deployment,
    ReleaseChanges,
    Release,
    Agent,
  ])
    app.addSchema(schema);
  // Synchronous, like every hook that runs on each request and waits for nothing.
  app.addHook('onSend', (req, reply, payload, done) => {
    reply.header('x-request-id', req.id);
    done(null, payload);
  });
  installAccessLog(app);
  installRequestMetrics(app, services.metrics.families.requestDuration);

  installSecurityHeaders(app, {
    // A plain-HTTP deployment must not have its page assets rewritten to https.
    contentSecurityPolicy: {
      directives: {
        upgradeInsecureRequests: core.config.publicUrl.startsWith('https:') ? [] : null,
      },
    },
  });
  await app.register(swagger, openapiOptions(core.config));
  installErrorHandling(app);
  installAuth(app, services.identity, services.agents, core.config.adminToken);
  // Wake-ups go out after their commit (db/waker.ts), tokens' last uses in batches
  // (identity/token-touches.ts): the last of both before the pool closes.
  services.waker.onError = (err) => app.log.warn({ err }, 'wake-ups not sent');
  app.addHook('onClose', async () => {
    await services.identity.flushTokenUses();
    await services.waker.flush();
  });
  installIdempotency(app, core.db, core.clock, IDEMPOTENCY_HOURS, core.sealer);

  app.get('/v2/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, async () =>
    app.swagger(),
  );
  // The API reference is public, like the document it shows (a browser sends no token). It is
  // registered after the error handler, so that its errors are problems too.
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, auth: 'none' };
    });
    // BaseLayout: the reference without Swagger's top bar, whose logo is an inline SVG with a
    // <style> in it that the CSP (rightly) blocks, and whose URL box has nothing to explore here.
    await docs.register(swaggerUi, {
      routePrefix: '/docs',
      staticCSP: true,
      uiConfig: { layout: 'BaseLayout' },
    });
  });

  const { db } = core;
  await app.register(healthRoutes({ db, isReady: opts.isReady ?? (() => true) }));
  await app.register(identityRoutes(services));
  await app.register(projectRoutes(services));
  await app.register(teamRoutes(services));
  await app.register(invitationRoutes(services));
  await app.register(grantRoutes(services));
  await app.register(orgRoutes(services));
  await app.register(orgInvitationRoutes(services));
  await app.register(auditRoutes(services));
  await app.register(frameRoutes(services));
  await app.register(historyRoutes(services));
  await app.register(frameMetricsRoutes(services));
  await app.register(
    releaseRoutes({ frameOps: services.frameOps, history: services.releaseHistory }),
  );
  await app.register(previewRoutes(services));
  await app.register(envRoutes(services));
  await app.register(domainRoutes(services));
  await app.register(volumeRoutes(services));
  await app.register(agentRoutes(services));
  await app.register(certificateRoutes(services));
  await app.register(webhookRoutes(services));
  await app.register(notificationRoutes(services));
  await app.register(
    adminRoutes({ ...services, clock: core.clock, testClock: core.config.testClock }),
  );
  await app.register(metricsRoutes(services.metrics));
  await app.register(webRoutes(services));
  await app.register(consoleRoutes(opts.console ?? consoleBuild(app.log)));
  await app.register(downloadRoutes());
  return app;
}

export type App = Awaited<ReturnType<typeof buildApp>>;
