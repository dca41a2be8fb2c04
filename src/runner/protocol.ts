// The sync protocol as the agent sees it (CONTRACT 6, src/agent-api/agents-schemas.ts). Types
// only, taken from the server's own schemas so that the two sides cannot drift; nothing of the
// server is loaded at run time.
import type { Static } from 'typebox';
import type { SyncAnswer, SyncBody } from '../agent-api/agents-schemas.ts';

type Body = Static<typeof SyncBody>;
export type Answer = Static<typeof SyncAnswer>;
export type DesiredFrame = NonNullable<Answer['frames']>[number];
export type SyncEvent = NonNullable<Body['events']>[number];
export type SyncLog = NonNullable<Body['logs']>[number];
export type BuildReport = NonNullable<Body['builds']>[number];
export type ReplicaEventType = SyncEvent['type'];

/** Server-side limits of one sync body (agents-schemas.ts). */
export const MAX_EVENTS_PER_SYNC = 500;
export const MAX_LOGS_PER_SYNC = 1000;
export const MAX_LINE_CHARS = 8192;
