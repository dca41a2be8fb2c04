// Environment variables of a frame (CONTRACT 5). Values are sealed at rest and only members and
// above read them; viewers see the names. An edit is a saved setting, not a rollout: it changes
// frames.env_digest so the frame lists "env" under pending_changes until the next deploy, which
// freezes the env into the deployment (deployments/deployments.ts) that the agent then runs.
// With `deploy`, the same transaction starts that deployment: a config release of the serving
// build (deployments/releases.ts), as Heroku releases a config change.
import { transaction, type Database, type Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { FrameScope } from '../frames/frame-scope.ts';
import type { AccessService } from '../access/access-service.ts';
import type { Sealer } from '../secrets.ts';
import { canOnProject } from '../access/roles.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { notFound, unprocessable } from '../errors.ts';
import { envSnapshot, type presentDeployment } from '../deployments/deployments.ts';
import { startConfigRelease } from '../deployments/releases.ts';
import * as dal from './env-dal.ts';
import { recordFrameEvent, refreshStatus } from '../frames/frame-events.ts';
import { refuseReserved } from './env-names.ts';
import { lockFrame } from '../frames/frames-dal.ts';
import type { FramesService } from '../frames/frames-service.ts';

export const MAX_ENV_VARS = 500;
export const MAX_ENV_VALUE_BYTES = 32 * 1024;

interface Deps {
  db: Database;
  clock: Clock;
  access: AccessService;
  sealer: Sealer;
  frames: Pick<FramesService, 'load'>;
  /** The most UTF-8 bytes a frame's env may hold, keys and values together (ENV_MAX_BYTES). */
  maxBytes: number;
  /** Deployments kept per frame (DEPLOYMENT_HISTORY), for a config release. */
  deploymentHistory: number;
}

/** What a set of env vars weighs: UTF-8 bytes of every key and value, as Heroku counts its cap. */
export function envBytes(vars: Map<string, string>): number {
  let n = 0;
  for (const [k, v] of vars) n += Buffer.byteLength(k, 'utf8') + Buffer.byteLength(v, 'utf8');
  return n;
}

/**
 * The total cap. Checked on the merged set under the frame's lock, so concurrent edits cannot
 * pass it together. A set already over it (saved before the cap, or before ENV_MAX_BYTES was
 * lowered) may still shrink: only an edit that grows it past the cap is refused.
 */
function refuseTooLarge(before: Map<string, string>, next: Map<string, string>, maxBytes: number) {
  const size = envBytes(next);
  if (size <= maxBytes || size <= envBytes(before)) return;
  throw unprocessable(
    'env_too_large',
    `A frame's environment variables may total at most ${maxBytes} bytes (UTF-8, keys and values ` +
      `together); this change would make them ${size} bytes. Shorten or remove variables ` +
      '(a PATCH with null deletes one), or keep large configuration elsewhere (a volume or a secret store).',
    [{ path: 'vars', message: `would total ${size} bytes; the limit is ${maxBytes}` }],
  );
}

export interface EnvAnswer {
  vars: Record<string, string | null>;
  values_visible: boolean;
  deployment?: ReturnType<typeof presentDeployment>;
}

export function createEnvService(deps: Deps) {
  const { db, clock, access, sealer, frames, maxBytes } = deps;
  async function current(q: Queryable, frameId: string): Promise<Map<string, string>> {
    const rows = await dal.envRows(q, frameId);
    return new Map(rows.map((r) => [r.key, sealer.open(r.value_sealed)]));
  }

  /**
   * Applies the wanted set in one transaction, writing only changed keys. `wanted` computes it
   * from the current set under the frame's lock, so concurrent edits of one frame serialize and
   * none is lost. (Maps, not objects: a key may be named like an Object.prototype member.)
   */
  async function change(
    actor: Actor,
    { projectId, spaceId, frameId }: FrameScope,
    wanted: (before: Map<string, string>) => Map<string, string>,
    deploy: boolean,
  ): Promise<EnvAnswer> {
    const now = clock.now();
    return transaction(db, async (trx) => {
      const { billing_status } = await frames.load(projectId, spaceId, frameId, trx);
      const locked = await lockFrame(trx, frameId);
      if (!locked) throw notFound('frame');
      // Applied as a release after the change, in its transaction: a refusal changes nothing.
      const released = async () =>
        deploy
          ? {
              deployment: await startConfigRelease(trx, sealer, locked, {
                actor,
                at: now,
                keep: deps.deploymentHistory,
                billing: billing_status,
              }),
            }
          : {};
      const before = await current(trx, frameId);
      const next = wanted(before);
      if (next.size > MAX_ENV_VARS) {
        throw unprocessable(
          'too_many_env_vars',
          `A frame holds at most ${MAX_ENV_VARS} environment variables.`,
          [
            {
              path: 'vars',
              message: `would hold ${next.size} variables; the limit is ${MAX_ENV_VARS}`,
            },
          ],
        );
      }
      const tooLarge = [...next]
        .filter(([, v]) => Buffer.byteLength(v, 'utf8') > MAX_ENV_VALUE_BYTES)
        .map(([k]) => k);
      if (tooLarge.length) {
        throw unprocessable(
          'env_value_too_large',
          `A value may be at most ${MAX_ENV_VALUE_BYTES} bytes (UTF-8).`,
          tooLarge.map((k) => ({
            path: `vars.${k}`,
            message: `is longer than ${MAX_ENV_VALUE_BYTES} bytes`,
          })),
        );
      }
      refuseTooLarge(before, next, maxBytes);
      const set = [...next.keys()].filter((k) => before.get(k) !== next.get(k)).sort();
      const deleted = [...before.keys()].filter((k) => !next.has(k)).sort();
      // Nothing changed: nothing is written, so the frame's version (its ETag) stays.
      if (set.length === 0 && deleted.length === 0)
        return { vars: Object.fromEntries(before), values_visible: true, ...(await released()) };

      if (deleted.length) await dal.deleteEnvKeys(trx, frameId, deleted);
      // Every key of `set` comes from `next`, so each has a value.
      const rows = set.flatMap((key) => {
        const value = next.get(key);
        return value === undefined ? [] : [{ key, value_sealed: sealer.seal(value) }];
      });
      if (rows.length) await dal.upsertEnv(trx, frameId, rows);
      // The digest comes from the very function a deployment uses, so the two compare equal
      // exactly when the saved env is the deployed one.
      const snapshot = await envSnapshot(trx, sealer, frameId);
      await dal.setEnvDigest(trx, frameId, snapshot.digest, now);
      // Names only: values never reach events or the audit log.
      await recordFrameEvent(trx, frameId, now, {
        type: 'env_changed',
        actorId: actor.userId,
        detail: { set, deleted },
      });
      await recordAudit(trx, actor, now, {
        projectId,
        action: 'frame.env_changed',
        targetType: 'frame',
        targetId: frameId,
        after: { set, deleted },
      });
      await refreshStatus(trx, [frameId], now);
      return { vars: snapshot.env, values_visible: true, ...(await released()) };
    });
  }

  return {
    async get(actor: Actor, { projectId, spaceId, frameId }: FrameScope): Promise<EnvAnswer> {
      const { role } = await access.requireProject(actor.userId, projectId, 'project.read');
      await frames.load(projectId, spaceId, frameId);
      const visible = canOnProject(role, 'env.read_values');
      if (visible)
        return { vars: Object.fromEntries(await current(db, frameId)), values_visible: true };
      // Viewers learn which names exist, never a value (not even a sealed one).
      const rows = await dal.envKeys(db, frameId);
      return { vars: Object.fromEntries(rows.map((r) => [r.key, null])), values_visible: false };
    },

    /** PUT: the body is the whole new set. */
    async replace(
      actor: Actor,
      { projectId, spaceId, frameId }: FrameScope,
      vars: Record<string, string>,
      deploy = false,
    ) {
      await access.requireProject(actor.userId, projectId, 'frame.edit');
      refuseReserved(Object.keys(vars));
      const all = () => new Map(Object.entries(vars));
      return change(actor, { projectId, spaceId, frameId }, all, deploy);
    },

    /**
     * PATCH: merged into the current set; null deletes a key (absent keys are fine). Deleting a
     * reserved name is allowed, so one saved before it was refused can be removed.
     */
    async merge(
      actor: Actor,
      { projectId, spaceId, frameId }: FrameScope,
      vars: Record<string, string | null>,
      deploy = false,
    ) {
      await access.requireProject(actor.userId, projectId, 'frame.edit');
      refuseReserved(
        Object.entries(vars)
          .filter(([, v]) => v !== null)
          .map(([k]) => k),
      );
      return change(
        actor,
        { projectId, spaceId, frameId },
        (before) => {
          const next = new Map(before);
          for (const [k, v] of Object.entries(vars)) {
            if (v === null) next.delete(k);
            else next.set(k, v);
          }
          return next;
        },
        deploy,
      );
    },
  };
}

export type EnvService = ReturnType<typeof createEnvService>;
