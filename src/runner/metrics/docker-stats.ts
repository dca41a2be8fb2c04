// A container's usage from the Docker Engine's stats (GET /containers/<id>/stats?stream=false):
// what the docker runtime's replicas and the swarm runtime's tasks on this node used. One-shot
// (`one-shot=true`, API 1.41): the Engine answers at once instead of waiting a second for a
// second reading of its own; the agent takes deltas between its own samples (deltas.ts).
import type Docker from 'dockerode';
import type { Usage } from '../runtimes/runtime.ts';

/** The fields of the Engine's stats answer that a Usage is made of (cgroup v1 and v2). */
export interface DockerStats {
  read?: string;
  cpu_stats?: { cpu_usage?: { total_usage?: number } };
  memory_stats?: { usage?: number; limit?: number; stats?: Record<string, number> };
  networks?: Record<string, { rx_bytes?: number; tx_bytes?: number }>;
}

const STATS_TIMEOUT_MS = 5000;

const finite = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n) && n >= 0;

/**
 * Memory in use as `docker stats` shows it: the usage less the page cache the kernel would
 * reclaim first (inactive files: `total_inactive_file` on cgroup v1, `inactive_file` on v2;
 * v1's whole `cache` where the Engine gives no inactive count).
 */
function memoryOf(m: NonNullable<DockerStats['memory_stats']>): number | undefined {
  if (!finite(m.usage)) return undefined;
  const s = m.stats ?? {};
  const reclaimable = s.total_inactive_file ?? s.inactive_file ?? s.cache ?? 0;
  return finite(reclaimable) && reclaimable < m.usage ? m.usage - reclaimable : m.usage;
}

/** A Usage of the Engine's answer; undefined for a container not running (no CPU reading). */
export function usageOfStats(s: DockerStats): Usage | undefined {
  const cpuNs = s.cpu_stats?.cpu_usage?.total_usage;
  if (!finite(cpuNs) || s.read?.startsWith('0001-')) return undefined;
  const usage: Usage = { cpuSeconds: cpuNs / 1e9 };
  const memory = s.memory_stats && memoryOf(s.memory_stats);
  if (memory !== undefined) usage.memoryBytes = memory;
  // An unlimited container reports the host's memory as its limit: still what bounds it.
  if (finite(s.memory_stats?.limit) && s.memory_stats.limit > 0)
    usage.memoryLimitBytes = s.memory_stats.limit;
  if (s.networks) {
    const nets = Object.values(s.networks);
    usage.netRxBytes = nets.reduce((n, x) => n + (finite(x.rx_bytes) ? x.rx_bytes : 0), 0);
    usage.netTxBytes = nets.reduce((n, x) => n + (finite(x.tx_bytes) ? x.tx_bytes : 0), 0);
  }
  return usage;
}

/** The container's usage now; undefined when it is gone or stopped, or the Engine is slow. */
export async function dockerUsage(docker: Docker, id: string): Promise<Usage | undefined> {
  try {
    // dockerode passes an abortSignal on to the request (its types do not say so).
    const options = {
      stream: false as const,
      'one-shot': true,
      abortSignal: AbortSignal.timeout(STATS_TIMEOUT_MS),
    };
    const stats = await docker.getContainer(id).stats(options);
    return usageOfStats(stats as DockerStats);
  } catch {
    return undefined;
  }
}
