// The frame-metrics bench's data (bench/metrics.ts): one user owning one project whose frames
// all run on one cloud agent, written by seed.ts; and the samples that agent sends, as its
// sync carries them (src/agent-api/sync-items.ts).
import { newId } from '../src/ids.ts';
import { newSecret } from '../src/secrets.ts';
import { mintToken } from '../src/identity/token-format.ts';
import type { Dataset } from './dataset.ts';
import { benchSealer } from './service.ts';
import { randomInt, seededRandom, type Random } from './shape.ts';

const DAY = 86_400_000;

/** A dataset of `frames` frames on one agent, owned by user 0. */
export function metricsDataset(frames: number): Dataset {
  const created = new Date(Date.now() - DAY);
  const userId = newId('user');
  const tokenId = newId('token');
  const tokenExpiresAt = new Date(Date.now() + 30 * DAY);
  const claims = { tokenId, userId, expiresAt: tokenExpiresAt };
  return {
    sizes: { users: 1, teams: 0, memberships: 0, projects: 1, grants: 0, frames },
    users: [
      {
        id: userId,
        email: 'metrics@bench.example',
        name: 'Metrics',
        createdAt: created,
        token: mintToken(benchSealer().tokenMac, claims) ?? newSecret('fp'),
        tokenId,
        tokenExpiresAt,
      },
    ],
    teams: [],
    projects: [
      {
        id: newId('project'),
        spaceId: newId('space'),
        owner: 0,
        name: 'metrics',
        createdAt: created,
        grants: [],
      },
    ],
    grants: [],
    agents: [{ id: newId('agent'), name: 'metrics', token: newSecret('fpa'), createdAt: created }],
    frames: Array.from({ length: frames }, (_, i) => ({
      id: newId('frame'),
      deploymentId: newId('deployment'),
      project: 0,
      agent: 0,
      name: `web-${i}`,
      port: 8080,
      createdAt: created,
    })),
    orgs: [],
    orgProjects: [],
  };
}

/** Replicas of a frame in the bench: the first frame (the one queried) has three. */
export const replicasOf = (frameIndex: number) => (frameIndex === 0 ? 3 : 1);

function replicaSample(random: Random, frame_id: string, replica: number, seconds: number) {
  return {
    frame_id,
    replica,
    seconds,
    cpu_seconds: Math.round(random() * seconds * 1000) / 1000,
    memory_bytes: 64 * 2 ** 20 + randomInt(random, 192 * 2 ** 20),
    memory_limit_bytes: 512 * 2 ** 20,
    net_rx_bytes: randomInt(random, 1_000_000),
    net_tx_bytes: randomInt(random, 1_000_000),
    restarts: random() < 0.001 ? 1 : 0,
  };
}

function requestSample(random: Random, frame_id: string, seconds: number) {
  const requests = randomInt(random, 50 * seconds);
  const latency = Array.from({ length: 15 }, () => 0);
  for (let i = 0; i < Math.min(requests, 200); i++) {
    const bucket = Math.min(14, Math.floor(-Math.log(1 - random()) * 3));
    latency[bucket] = (latency[bucket] ?? 0) + 1;
  }
  const s5 = randomInt(random, 3);
  return {
    frame_id,
    seconds,
    status: { '1xx': 0, '2xx': requests, '3xx': 0, '4xx': randomInt(random, 5), '5xx': s5 },
    latency,
  };
}

/**
 * What the agent sends of `frameIds` (the frames from index `first` on) for `seconds`: one
 * sample per replica and one per frame.
 */
export function metricsOf(frameIds: string[], seconds: number, first = 0, seed = 39) {
  const random = seededRandom(seed + first);
  return {
    replicas: frameIds.flatMap((id, i) =>
      Array.from({ length: replicasOf(first + i) }, (_, r) =>
        replicaSample(random, id, r, seconds),
      ),
    ),
    requests: frameIds.map((id) => requestSample(random, id, seconds)),
  };
}
