// A new release takes over only once healthy (CONTRACT 5): while an earlier release serves, the
// crashes, OOMs and start time-outs of a newer one end that one's deployment and nothing else.
// They do not count toward the back-off (whose trip would stop the serving release with it) and
// do not replace what the serving replicas' rows say (the frame keeps the serving release's
// status). Only a frame with nothing serving counts them. Pure; used by the agent sync
// (agent-api/sync-reports.ts).
import type { ReplicaState } from './frame-status.ts';

/** A replica's row as the sync keeps it: the release it runs (a deployment id) and its state. */
export interface ReplicaRow {
  replica: number;
  state: string;
  deployment_id: string | null;
}

export interface ReportFacts {
  event: { replica: number; type: ReplicaState; deployment_id?: string | null };
  /** The frame's replica rows before this report. */
  rows: readonly ReplicaRow[];
  replicaCount: number;
}

export interface EventEffect {
  /** The report replaces what the replica's row says. */
  save: boolean;
  /** The report goes to the crash streak (backoff.ts afterEvent). */
  countsForBackoff: boolean;
  /**
   * Earlier releases that serve while the report's newer release has not taken over; empty when
   * the report is not of such a release. If the report fails its deployment, these go on.
   */
  serving: string[];
}

/**
 * What one replica report does. Deployment ids sort by creation (ids.ts), so a release is newer
 * than another when its id sorts after. A report without a deployment id (an older agent) cannot
 * be told apart from the serving release's: it counts as it always did.
 */
export function eventEffect({ event, rows, replicaCount }: ReportFacts): EventEffect {
  const release = event.deployment_id ?? null;
  const serving =
    release === null
      ? []
      : [
          ...new Set(
            rows.flatMap((r) =>
              r.replica < replicaCount &&
              r.state === 'healthy' &&
              r.deployment_id !== null &&
              r.deployment_id < release
                ? [r.deployment_id]
                : [],
            ),
          ),
        ].sort();
  if (serving.length === 0) return { save: true, countsForBackoff: true, serving };
  const row = rows.find((r) => r.replica === event.replica);
  return {
    // A healthy replica of the new release takes its row: that is how it takes over (and
    // completes its deployment). Anything else it says stays off rows of another release.
    save: event.type === 'healthy' || row === undefined || row.deployment_id === release,
    // A replica that became healthy still ends a streak; a failure never adds to it.
    countsForBackoff: event.type === 'healthy',
    serving,
  };
}
