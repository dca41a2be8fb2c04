// The sync protocol as the agent sees it (CONTRACT 6, src/agent-api/agents-schemas.ts). Types
// taken from the server's own schemas so that the two sides cannot drift. Of the server, only
// the item schemas are loaded at run time (agent-api/sync-items.ts, which the agent checks each
// item against, sync-check.ts): a module of schemas that loads nothing else of the server.
import type { Static } from 'typebox';
import type { SyncAnswer } from '../agent-api/agents-schemas.ts';
import type { BuildReportItem, SyncEventItem, SyncLogItem } from '../agent-api/sync-items.ts';

export { MAX_LINE_CHARS } from '../agent-api/sync-items.ts';
export type Answer = Static<typeof SyncAnswer>;
export type DesiredFrame = NonNullable<Answer['frames']>[number];
export type SyncEvent = Static<typeof SyncEventItem>;
export type SyncLog = Static<typeof SyncLogItem>;
export type BuildReport = Static<typeof BuildReportItem>;
export type ReplicaEventType = SyncEvent['type'];

/** Server-side limits of one sync body (agents-schemas.ts). */
export const MAX_EVENTS_PER_SYNC = 500;
export const MAX_LOGS_PER_SYNC = 1000;
