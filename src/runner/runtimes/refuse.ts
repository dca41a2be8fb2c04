// What an agent does with frames it must not run: each new deployment fails at once, with the
// reason in the deployment (build_failed: it does not count toward the back-off), and nothing
// of the tenant's runs. Used when `auto` finds no Docker Engine on an agent that runs strangers'
// code (choose.ts): the process runtime is refused to them unless the operator chose it.
import type { DesiredFrame } from '../protocol.ts';
import type { PersistedFrame } from '../state.ts';
import { nowIso, type FrameSupervisor, type SupervisorDeps } from '../supervisor.ts';

export function refusingSupervisor(why: string) {
  return (frameId: string, deps: SupervisorDeps): FrameSupervisor => {
    const refused = new Set<string>();
    let spec: DesiredFrame | undefined;
    return {
      async update(s) {
        spec = s;
        if (s.desired_state !== 'running' || s.build_failed || refused.has(s.deployment_id)) return;
        refused.add(s.deployment_id);
        deps.line(frameId, 0, `[frameplane] not run: ${why}`);
        deps.build({ deployment_id: s.deployment_id, state: 'failed', message: why, at: nowIso() });
      },
      remove: async () => {},
      running: () => ({ instances: [], restarts: new Map() }),
      detach: () => (spec ? { spec, sets: [], failed_builds: [...refused] } : undefined),
      shutdown: async () => {},
      persisted: () => (spec ? { spec, sets: [], failed_builds: [...refused] } : undefined),
      async adopt(p: PersistedFrame) {
        for (const id of p.failed_builds ?? []) refused.add(id);
        spec = p.spec;
      },
    };
  };
}
