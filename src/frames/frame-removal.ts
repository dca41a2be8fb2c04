// Deleting a frame, by a person (frames-service) or by the service (an expired or closed
// preview, previews/): its domains and volumes are released with it, its previews go too
// (migrations/0027 cascades), and the agents running any of them and their live streams learn
// it once the transaction commits.
import type { Queryable } from '../db/database.ts';
import { domainsReleasedWith } from '../domains/domains-dal.ts';
import { notifyAgents } from './frame-events.ts';
import { deleteFrame, notifyFrameEvents } from './frames-dal.ts';
import { volumesReleasedWith } from '../volumes/volumes-dal.ts';

/** Deletes the locked frame; answers what it released. */
export async function removeFrame(q: Queryable, frame: { id: string; agent_id: string | null }) {
  const previews = await q
    .selectFrom('frames')
    .select(['id', 'agent_id'])
    .where('preview_of', '=', frame.id)
    .execute();
  const domains = await domainsReleasedWith(q, frame.id);
  const volumes = await volumesReleasedWith(q, frame.id);
  await deleteFrame(q, frame.id);
  await notifyAgents(q, [frame.agent_id, ...previews.map((p) => p.agent_id)]);
  for (const id of [frame.id, ...previews.map((p) => p.id)]) await notifyFrameEvents(q, id);
  return { domains, volumes };
}
