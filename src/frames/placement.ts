import type { Queryable } from '../db/database.ts';
import { notifyAgents, refreshStatus } from './frame-events.ts';
import { assignAgent, leastLoadedCloudAgent, lockUnplacedCloudFrames } from './placement-dal.ts';

/** Places cloud frames created while no cloud agent existed. */
export async function placeUnplacedFrames(q: Queryable, now: Date) {
  const unplaced = await lockUnplacedCloudFrames(q);
  const placed: string[] = [];
  for (const f of unplaced) {
    const agentId = await leastLoadedCloudAgent(q);
    if (!agentId) return;
    await assignAgent(q, f.id, agentId);
    placed.push(agentId);
  }
  await notifyAgents(q, placed);
  await refreshStatus(
    q,
    unplaced.map((f) => f.id),
    now,
  );
}
