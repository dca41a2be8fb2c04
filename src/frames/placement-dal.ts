// Placement: which agent runs a cloud frame. It reads and writes frames (and counts them per
// agent), so it belongs to the frames area; the agent API calls it when a cloud agent registers.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';

/** The cloud agent with the fewest frames, or null while the operator has registered none. */
export async function leastLoadedCloudAgent(q: Queryable): Promise<string | null> {
  const row = await q
    .selectFrom('agents as a')
    .select('a.id')
    .where('a.kind', '=', 'cloud')
    .orderBy(sql`(select count(*) from frames f where f.agent_id = a.id)`)
    .orderBy('a.id')
    .limit(1)
    .executeTakeFirst();
  return row?.id ?? null;
}

/** Cloud frames created while no cloud agent existed, locked for placing. */
export function lockUnplacedCloudFrames(q: Queryable) {
  return q
    .selectFrom('frames')
    .select('id')
    .where('runtime_kind', '=', 'cloud')
    .where('agent_id', 'is', null)
    .forUpdate()
    .execute();
}

/** Puts a frame on an agent; the new generation tells the agent to run it. */
export async function assignAgent(q: Queryable, frameId: string, agentId: string) {
  await q
    .updateTable('frames')
    .set({ agent_id: agentId, generation: sql`generation + 1` })
    .where('id', '=', frameId)
    .execute();
}
