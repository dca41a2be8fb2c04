// The names a frame's env may not use, because the runtime sets them itself. A rule of its own,
// free of the env service, because creating and updating a frame checks its previews' env
// overrides with it too (frames/frames-service.ts), and the env service depends on frames.
import { unprocessable } from '../errors.ts';

/**
 * Names the runtime sets itself, after the frame's env, so a value saved here would be silently
 * replaced (runner/runtimes: docker.ts, process.ts, swarm/service.ts): PORT is the frame's `port`
 * setting, FRAMEPLANE_* are the frame, deployment, replica and volume facts. Refused rather than
 * ignored. Case-sensitive, as environment variables are.
 */
export function reservedEnvErrors(keys: Iterable<string>) {
  const errors: Array<{ path: string; message: string }> = [];
  for (const key of keys) {
    if (key === 'PORT') {
      errors.push({
        path: `vars.${key}`,
        message:
          "is set by Frameplane to the frame's port: change the frame's `port` setting (PATCH the frame) instead",
      });
    } else if (key.startsWith('FRAMEPLANE_')) {
      errors.push({
        path: `vars.${key}`,
        message:
          'the FRAMEPLANE_ prefix is reserved for what Frameplane sets (FRAMEPLANE_FRAME_ID, FRAMEPLANE_DEPLOYMENT_ID, FRAMEPLANE_REPLICA, FRAMEPLANE_VOLUME_*): choose another name',
      });
    }
  }
  return errors;
}

/** The preview overrides of a frame (PATCH previews.env) follow the same naming rule. */
export function refusePreviewEnv(env: Record<string, string> | undefined) {
  if (env) refuseReserved(Object.keys(env));
}

export function refuseReserved(keys: Iterable<string>) {
  const errors = reservedEnvErrors(keys);
  if (errors.length) {
    throw unprocessable(
      'reserved_env_var',
      `Frameplane sets ${errors.map((e) => e.path.slice(5)).join(', ')} itself; the app's port is the frame's \`port\` setting.`,
      errors,
    );
  }
}
