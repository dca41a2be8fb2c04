// `frameplane agent`: the reference agent on the command line. Loaded by bin/frameplane.mjs.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { agentLogger } from './log.ts';
import { startAgent } from './agent.ts';
import { RUNTIMES, type RuntimeChoice } from './runtimes/choose.ts';
import { parseAllow, type AllowRule } from './egress-policy.ts';
import { EDGE_PLANES, type EdgePlane } from './edge/edge.ts';

const USAGE = `Usage: frameplane agent --server URL --token TOKEN [options]

Runs the frames that a Frameplane service places on this agent: in Docker containers when a
Docker Engine answers, else as local processes (for development on your own code).

Options:
  --server URL           the Frameplane service (env FRAMEPLANE_SERVER)
  --token TOKEN          the agent token, shown once at registration (env FRAMEPLANE_AGENT_TOKEN;
                         prefer the variable: arguments are visible to every user in ps)
  --data DIR             state, checkouts and logs (env FRAMEPLANE_AGENT_DATA; default ./frameplane-agent)
  --edge-port PORT       serve the frames over HTTP on this port, each at its own hostname
                         (env EDGE_HTTP_PORT; 0: any free port); without it, no edge: the
                         frames run but nothing here routes requests to them
  --edge-https-port PORT serve them over HTTPS too, on this port, with the certificates the
                         service orders from its ACME server (env EDGE_HTTPS_PORT; needs
                         --edge-port, which then redirects to HTTPS, on 80 for ACME to reach)
  --edge-plane PLANE     builtin (default: nothing to install) or haproxy (Debian's haproxy 2.6,
                         driven through its Runtime API) (env EDGE_PLANE)
  --edge-max-body-mb N   largest request body the edge passes to an app, in MiB; larger ones
                         get 413 (env EDGE_MAX_BODY_MB; default 100)
  --edge-host HOST       address the edge listens on (env EDGE_HOST; default 127.0.0.1;
                         --host and FRAME_HOST are older names of it)
  --git-base-url URL     where repositories live: https://host, file:///dir or /dir, holding
                         <owner>/<repo>.git (env GIT_BASE_URL; default https://github.com)
  --runtime KIND         auto, docker, swarm, kubernetes or process (env FRAME_RUNTIME; default
                         auto: docker when the Engine at DOCKER_HOST or /var/run/docker.sock
                         answers, else process); swarm needs DOCKER_HOST to be a swarm manager;
                         kubernetes needs KUBECONFIG (or runs in a pod) and an Engine to build
                         (see README: FRAME_NAMESPACE, KUBERNETES_CLUSTER_CIDRS, KUBERNETES_NODE,
                         KUBERNETES_STORAGE_CLASS)
  --base-image IMAGE     image that generated Dockerfiles build on (env FRAME_BASE_IMAGE;
                         default node:22-bookworm-slim)
  --registry HOST[:PORT] swarm: push images there so every node can pull them (env
                         FRAME_REGISTRY; without one, tasks run on the manager that built them)
  --memory-mb N          memory limit of each container, no swap (env FRAME_MEMORY_MB; default 512)
  --cpus N               CPUs of each container (env FRAME_CPUS; default 1)
  --start-timeout S      seconds a replica has to answer its health check before it is
                         reported unhealthy (env FRAME_START_TIMEOUT_SECONDS; default 60)
  --releases-kept N      builds of a frame's last N releases kept to roll back to without
                         building (env RELEASES_KEPT, as the service's; default 5)
  --metrics-interval S   seconds between two samples of what each replica uses (CPU, memory,
                         network, restarts) and what the edge answered per frame, sent to the
                         service (env METRICS_INTERVAL_SECONDS; default 10; 0: none)
  --egress-allow LIST    process runtime: addresses builds may reach besides public ones,
                         comma-separated ADDRESS[/BITS][:PORT] (env BUILD_EGRESS_ALLOW; a
                         private registry mirror, say); this machine and private, link-local
                         and other special addresses are refused otherwise
  --hide DIR             a directory no app may read, besides --data (repeatable; env
                         FRAMEPLANE_AGENT_HIDE, colon-separated)
  --stop-frames-on-exit  stop every frame when the agent exits (default: leave them running,
                         unreachable until the next start of the agent adopts them)
  -h, --help             this help
`;

function fail(message: string): never {
  process.stderr.write(`frameplane: ${message}\n\n${USAGE}`);
  process.exit(2);
}

/** A port option: undefined when unset or empty; 0 is any free port. */
function portOption(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535)
    fail(`--${name} must be a port number (0 to 65535), got "${raw}"`);
  return Number(raw);
}

const parseAgentArgs = (args: string[]) =>
  parseArgs({
    args,
    allowPositionals: false,
    strict: true,
    options: {
      server: { type: 'string' },
      token: { type: 'string' },
      data: { type: 'string' },
      host: { type: 'string' },
      'edge-host': { type: 'string' },
      'edge-port': { type: 'string' },
      'edge-https-port': { type: 'string' },
      'edge-max-body-mb': { type: 'string' },
      'edge-plane': { type: 'string' },
      'git-base-url': { type: 'string' },
      'stop-frames-on-exit': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      runtime: { type: 'string' },
      'base-image': { type: 'string' },
      'memory-mb': { type: 'string' },
      cpus: { type: 'string' },
      'start-timeout': { type: 'string' },
      'releases-kept': { type: 'string' },
      'metrics-interval': { type: 'string' },
      hide: { type: 'string', multiple: true },
      registry: { type: 'string' },
      'egress-allow': { type: 'string' },
    },
  });

async function agentCommand(args: string[]) {
  let values: ReturnType<typeof parseAgentArgs>['values'];
  try {
    ({ values } = parseAgentArgs(args));
  } catch (err) {
    fail((err as Error).message);
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const server = values.server ?? process.env.FRAMEPLANE_SERVER;
  const token = values.token ?? process.env.FRAMEPLANE_AGENT_TOKEN;
  if (!server) fail('--server is required');
  if (!token) fail('--token (or FRAMEPLANE_AGENT_TOKEN) is required');
  try {
    new URL(server);
  } catch {
    fail(`--server must be a URL, got "${server}"`);
  }

  const runtime = values.runtime ?? process.env.FRAME_RUNTIME ?? 'auto';
  if (!(RUNTIMES as readonly string[]).includes(runtime))
    fail(`--runtime must be one of ${RUNTIMES.join(', ')}, got "${runtime}"`);
  const number = (name: string, raw: string | undefined, min: number) => {
    if (raw === undefined || raw === '') return undefined;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min) fail(`--${name} must be a number >= ${min}, got "${raw}"`);
    return n;
  };
  const memoryMb = number('memory-mb', values['memory-mb'] ?? process.env.FRAME_MEMORY_MB, 16);
  const cpus = number('cpus', values.cpus ?? process.env.FRAME_CPUS, 0.01);
  const edgePlane = values['edge-plane'] ?? process.env.EDGE_PLANE ?? 'builtin';
  if (!(EDGE_PLANES as readonly string[]).includes(edgePlane))
    fail(`--edge-plane must be one of ${EDGE_PLANES.join(', ')}, got "${edgePlane}"`);
  const maxBodyMb = number(
    'edge-max-body-mb',
    values['edge-max-body-mb'] ?? process.env.EDGE_MAX_BODY_MB,
    1,
  );
  const startTimeout = number(
    'start-timeout',
    values['start-timeout'] ?? process.env.FRAME_START_TIMEOUT_SECONDS,
    1,
  );
  const releasesKept = number(
    'releases-kept',
    values['releases-kept'] ?? process.env.RELEASES_KEPT,
    1,
  );
  const metricsInterval = number(
    'metrics-interval',
    values['metrics-interval'] ?? process.env.METRICS_INTERVAL_SECONDS,
    0,
  );
  if (
    metricsInterval !== undefined &&
    (metricsInterval > 3600 || (metricsInterval > 0 && metricsInterval < 1))
  )
    fail(`--metrics-interval must be 0 or 1 to 3600 seconds, got "${metricsInterval}"`);
  const edgePort = portOption('edge-port', values['edge-port'] ?? process.env.EDGE_HTTP_PORT);
  const edgeHttpsPort = portOption(
    'edge-https-port',
    values['edge-https-port'] ?? process.env.EDGE_HTTPS_PORT,
  );
  if (edgeHttpsPort !== undefined && edgePort === undefined)
    fail('--edge-https-port needs --edge-port: ACME checks a host over plain HTTP');
  const hide = [...(values.hide ?? []), ...(process.env.FRAMEPLANE_AGENT_HIDE ?? '').split(':')]
    .filter(Boolean)
    .map((d) => resolve(d));

  let egressAllow: AllowRule[];
  try {
    egressAllow = parseAllow(values['egress-allow'] ?? process.env.BUILD_EGRESS_ALLOW);
  } catch (err) {
    fail((err as Error).message);
  }

  const log = agentLogger();
  const agent = await startAgent({
    server,
    token,
    log,
    dataDir: resolve(values.data ?? process.env.FRAMEPLANE_AGENT_DATA ?? './frameplane-agent'),
    edgePort,
    edgeHttpsPort,
    edgePlane: edgePlane as EdgePlane,
    edgeMaxBodyBytes: maxBodyMb === undefined ? undefined : maxBodyMb * 2 ** 20,
    edgeHost:
      values['edge-host'] ??
      values.host ??
      process.env.EDGE_HOST ??
      process.env.FRAME_HOST ??
      '127.0.0.1',
    gitBaseUrl: values['git-base-url'] ?? process.env.GIT_BASE_URL ?? 'https://github.com',
    stopFramesOnExit: values['stop-frames-on-exit'] ?? false,
    runtime: runtime as RuntimeChoice,
    hide,
    memoryMb,
    cpus,
    baseImage: values['base-image'] ?? process.env.FRAME_BASE_IMAGE,
    registry: values.registry ?? (process.env.FRAME_REGISTRY || undefined),
    egressAllow,
    // Set by the service for its built-in cloud when anyone may sign up (src/cloud/builtin.ts).
    strangers: process.env.FRAMEPLANE_AGENT_STRANGERS === '1',
    startTimeoutMs: startTimeout === undefined ? undefined : startTimeout * 1000,
    releasesKept,
    metricsIntervalMs: metricsInterval === undefined ? undefined : metricsInterval * 1000,
  });
  const exit = (why: string) => {
    log.info({ why }, 'stopping');
    void agent.stop().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const)
    process.on(signal, () => exit(signal));
  if (process.env.FRAMEPLANE_AGENT_EXIT_WITH_PARENT === '1') {
    // Run by the service (the built-in cloud): a service killed outright must not leave its
    // agent behind, holding the data directory that the next start's agent needs.
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent) exit('parent exited');
    }, 1000).unref();
  }
}

export async function main(argv: string[]) {
  const [command, ...rest] = argv;
  if (!command || command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write(
      `Usage: frameplane <command>\n\nCommands:\n  agent   run frames on this machine (frameplane agent --help)\n`,
    );
    return;
  }
  if (command === 'agent') return agentCommand(rest);
  fail(`unknown command "${command}"`);
}

await main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`frameplane: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
