// How a replica runs, behind one small interface. The supervisor (frame-runner.ts) decides what
// runs where and when; a runtime knows only how: build a release from a deployment, start a
// replica of it, find one again after the agent restarted, clean up. One file per runtime:
// process.ts (development), docker.ts (Docker Engine). Swarm runs whole frames (swarm/frame.ts).

/** Where the agent reaches a replica's port: a loopback port, or a Unix socket into its sandbox. */
export type Endpoint = { host: string; port: number } | { path: string };

export interface Volume {
  id: string;
  name: string;
  mount_path: string;
  size_gb: number;
}

export interface FetchSpec {
  gitBaseUrl: string;
  owner: string;
  repo: string;
  branch: string;
  commitSha: string | null;
}

/** A deployment built into something that runs: an image, or a directory and a command. */
export interface Release {
  deploymentId: string;
  artifact: string;
  command?: string;
  commitSha: string;
  /** The image's id (docker, swarm), reported so that a release says what it ran. */
  image?: string;
}

export interface ReplicaSpec {
  frameId: string;
  deploymentId: string;
  index: number;
  release: Release;
  env: Record<string, string>;
  volumes: Volume[];
  /** The frame's port: the app listens on it (PORT) inside its own network namespace. */
  port: number;
}

export interface ExitInfo {
  code: number | null;
  signal: string | null;
  oom: boolean;
}

/** What a runtime needs to find a replica again after the agent restarted (persisted). */
export interface ReplicaRef {
  id: string;
  startTime?: string;
  endpoint: Endpoint;
  cursor: string;
  /** The process runtime's control group of the replica, where it has one (cgroups.ts). */
  cgroup?: string;
}

/**
 * What a replica used, as its runtime counts it (metrics/): counters since it started, gauges
 * as they are now. Each field only where the runtime knows it.
 */
export interface Usage {
  /** CPU time used since it started, in seconds. */
  cpuSeconds?: number;
  /** Memory in use now, without the page cache the kernel may reclaim. */
  memoryBytes?: number;
  memoryLimitBytes?: number;
  /** Bytes received and sent since it started. */
  netRxBytes?: number;
  netTxBytes?: number;
}

export interface RunningReplica {
  readonly endpoint: Endpoint;
  /** Settles once the replica has exited; never while it runs detached. */
  readonly exit: Promise<ExitInfo>;
  /** Asks it to stop (SIGTERM), kills it after the grace period; resolves once it is gone. */
  stop(graceMs: number): Promise<void>;
  /** Stops watching it and leaves it running, for the next agent to adopt. */
  detach(): void;
  ref(): ReplicaRef;
  /** What it used so far (metrics/sampler.ts); undefined once it is gone. Never throws. */
  usage(): Promise<Usage | undefined>;
}

export interface BuildRequest {
  frameId: string;
  deploymentId: string;
  source: FetchSpec;
  onLine(line: string): void;
  /** The source is fetched: the commit is known and the build begins. */
  onFetched(commitSha: string): void;
  signal: AbortSignal;
}

export interface ReplicaRuntime {
  readonly kind: 'process' | 'docker';
  build(r: BuildRequest): Promise<Release>;
  /** A release built earlier (the agent restarted), if still there. */
  reuse(frameId: string, release: Release): Promise<boolean>;
  start(spec: ReplicaSpec, onLine: (line: string) => void): Promise<RunningReplica>;
  /** The replica an earlier agent left, if it still runs; else undefined (and nothing of it left). */
  adopt(ref: ReplicaRef, onLine: (line: string) => void): Promise<RunningReplica | undefined>;
  /** Drops the releases of this frame other than `keep`. */
  prune(frameId: string, keep: Release[]): Promise<void>;
  /** The frame left this agent: remove what it left behind (its data volumes stay). */
  forget(frameId: string): Promise<void>;
}

/**
 * A deployment that cannot become a release: its source could not be cloned (clone_failed), its
 * image not pushed or the request not taken (image_pull_failed), or it did not build.
 */
export class BuildError extends Error {
  constructor(
    readonly reason: 'clone_failed' | 'image_pull_failed' | 'build_failed',
    message: string,
  ) {
    super(message);
  }
}
