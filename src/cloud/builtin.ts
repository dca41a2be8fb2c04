// The built-in cloud (CONTRACT 0, CLOUD_AGENT=builtin): the reference agent run by the service
// itself, as a child process, registered as the cloud agent named `builtin`. Its token lives in
// DATA_DIR/builtin-agent.json (0600); the database keeps only its hash, so when the file is lost
// the `builtin` row gets a new token rather than a second row, and its frames stay placed on it.
// The child is restarted if it dies and stopped (SIGTERM, then SIGKILL) with the service; its
// frames then stop or keep running for the next start to adopt, as FRAMES_ON_EXIT says
// (frames-on-exit.ts). It runs in a process group of its own, so that Ctrl-C in a terminal
// reaches the service alone, which stops the agent in its drain; a service killed outright
// leaves no agent behind (it watches its parent: FRAMEPLANE_AGENT_EXIT_WITH_PARENT).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { systemClock } from '../clock.ts';
import { createAccessService } from '../access/access-service.ts';
import { createAgentsService } from '../agent-api/agents-service.ts';
import { hashSecret, newSecret } from '../secrets.ts';
import { restartDelayMs } from '../runner/replica.ts';
import { lines } from '../lines.ts';
import { findCloudAgentByName, findCloudAgentByToken, setAgentTokenHash } from './builtin-dal.ts';
import { agentExitOf, stopsFramesOnExit, type AgentExit } from './frames-on-exit.ts';
import { runsStrangersCode } from './strangers.ts';

export const BUILTIN_AGENT_NAME = 'builtin';
const BIN = fileURLToPath(new URL('../../bin/frameplane.mjs', import.meta.url));
/** What the agent must not inherit from the service: it needs none of it, and apps must never see it. */
const SERVICE_SECRETS = [
  'DATABASE_URL',
  'SECRET_KEY',
  'ADMIN_TOKEN',
  'SMTP_URL',
  'PORT',
  'HOST',
  'PUBLIC_URL',
  'DATA_DIR',
];

export interface BuiltinCredentials {
  agent_id: string;
  token: string;
}

type Deps = {
  db: Database;
  config: Pick<
    Config,
    | 'dataDir'
    | 'agentOfflineAfterSeconds'
    | 'logLevel'
    | 'testClock'
    | 'publicUrl'
    | 'framesOnExit'
    | 'signup'
    | 'edgeHttpPort'
    | 'edgeHttpsPort'
    | 'acme'
  >;
};

/** The `builtin` cloud agent and its token: from the file if still valid, else made valid. */
export async function ensureBuiltinAgent({ db, config }: Deps): Promise<BuiltinCredentials> {
  const file = join(config.dataDir, 'builtin-agent.json');
  let saved: Partial<BuiltinCredentials> = {};
  try {
    saved = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    /* first start */
  }
  if (typeof saved.token === 'string') {
    const row = await findCloudAgentByToken(db, hashSecret(saved.token));
    if (row) return { agent_id: row.id, token: saved.token };
  }
  let creds: BuiltinCredentials;
  const existing = await findCloudAgentByName(db, BUILTIN_AGENT_NAME);
  if (existing) {
    const token = newSecret('fpa');
    await setAgentTokenHash(db, existing.id, hashSecret(token));
    creds = { agent_id: existing.id, token };
  } else {
    const clock = systemClock(db, { testClock: config.testClock });
    await clock.refresh();
    const agents = createAgentsService({
      db,
      clock,
      access: createAccessService(db),
      offlineAfterSeconds: config.agentOfflineAfterSeconds,
      publicUrl: config.publicUrl,
    });
    const created = await agents.registerCloud({ name: BUILTIN_AGENT_NAME }); // also places frames that waited for a cloud agent
    creds = { agent_id: created.id, token: created.token };
  }
  mkdirSync(config.dataDir, { recursive: true });
  writeFileSync(file, JSON.stringify(creds), { mode: 0o600 });
  return creds;
}

/** The service's own address as a client reaches it: a wildcard listen address is not one. */
export function reachableUrl(url: string): string {
  const u = new URL(url);
  if (u.hostname === '0.0.0.0') u.hostname = '127.0.0.1';
  if (u.hostname === '[::]') u.hostname = '[::1]';
  return u.origin;
}

const LEVELS: Record<number, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

/**
 * Re-logs the agent's JSON lines through the service's logger, so one log holds both; `seen`
 * gets each line's fields.
 */
function forward(
  stream: NodeJS.ReadableStream,
  log: Logger,
  seen: (fields: Record<string, unknown>) => void,
) {
  lines(stream, (line) => {
    if (!line.trim()) return;
    try {
      const {
        level,
        msg,
        time: _t,
        pid: _p,
        hostname: _h,
        service: _s,
        ...fields
      } = JSON.parse(line) as Record<string, unknown>;
      log[LEVELS[level as number] ?? 'info'](fields, String(msg ?? ''));
      seen(fields);
    } catch {
      log.info({ output: line }, 'agent output');
    }
  });
}

export interface BuiltinAgent {
  /** SIGTERM, then SIGKILL after 15 s; resolves once the agent is gone. */
  stop(): Promise<void>;
  /** What the agent said of its frames as it stopped; undefined before, or if it did not say. */
  exitReport(): AgentExit | undefined;
  /** SIGTERM and return at once: for an exit that cannot wait. */
  requestStop(): void;
}

export async function startBuiltinAgent({
  db,
  config,
  log,
  url,
  terminal = process.stdin.isTTY === true,
}: Deps & {
  log: Logger;
  url: string;
  /** Whether a person started the service from a terminal (FRAMES_ON_EXIT=auto). */
  terminal?: boolean;
}): Promise<BuiltinAgent> {
  const creds = await ensureBuiltinAgent({ db, config });
  const agentLog = log.child({ component: 'builtin-agent', agent_id: creds.agent_id });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    FRAMEPLANE_AGENT_TOKEN: creds.token,
    LOG_LEVEL: config.logLevel,
    FRAMEPLANE_AGENT_EXIT_WITH_PARENT: '1',
    // Apps must never read the service's data: its key, the database, this agent's token.
    FRAMEPLANE_AGENT_HIDE: config.dataDir,
    // Anyone may sign up and reach it: never run their apps as local processes by default.
    FRAMEPLANE_AGENT_STRANGERS: runsStrangersCode(config) ? '1' : '0',
    // The cloud serves its frames by hostname (CONTRACT 5b): its edge is on by default, on the
    // port the service's configuration says (EDGE_HOST, if set, passes through as it is).
    EDGE_HTTP_PORT: String(config.edgeHttpPort),
  };
  // HTTPS only when the service orders certificates; an EDGE_HTTPS_PORT of the service's own
  // environment is not the agent's otherwise.
  if (config.acme) env.EDGE_HTTPS_PORT = String(config.edgeHttpsPort);
  else delete env.EDGE_HTTPS_PORT;
  for (const k of SERVICE_SECRETS) delete env[k];
  // The token goes by environment, not argument: arguments show in every user's `ps`.
  const args = [
    BIN,
    'agent',
    '--server',
    reachableUrl(url),
    '--data',
    join(config.dataDir, 'agent'),
  ];
  const stopFrames = stopsFramesOnExit(config.framesOnExit, terminal);
  if (stopFrames) args.push('--stop-frames-on-exit');

  let child: ChildProcess | undefined;
  let stopping = false;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;
  let report: AgentExit | undefined;
  const seen = (fields: Record<string, unknown>) => {
    report = agentExitOf(fields) ?? report;
  };

  const launch = () => {
    const startedAt = Date.now();
    // A process group of its own: Ctrl-C reaches the service, which stops the agent in order.
    const c = spawn(process.execPath, args, {
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = c;
    // Both are pipes (stdio above).
    if (c.stdout) forward(c.stdout, agentLog, seen);
    if (c.stderr) forward(c.stderr, agentLog, seen);
    c.once('error', (err) => agentLog.error({ err }, 'could not start the built-in agent'));
    c.once('exit', (code, signal) => {
      child = undefined;
      if (stopping) return;
      if (Date.now() - startedAt > 60_000) failures = 0; // it ran a good while: start the delays over
      const delay = restartDelayMs(failures++);
      agentLog.warn({ code, signal, restart_in_ms: delay }, 'built-in agent exited; restarting it');
      timer = setTimeout(launch, delay);
    });
  };
  launch();
  agentLog.info(
    { data: join(config.dataDir, 'agent'), frames_on_exit: stopFrames ? 'stop' : 'keep' },
    'built-in cloud agent started',
  );

  return {
    requestStop() {
      stopping = true;
      clearTimeout(timer);
      child?.kill('SIGTERM');
    },
    async stop() {
      stopping = true;
      clearTimeout(timer);
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
      const closed = new Promise<void>((resolve) => c.once('close', () => resolve()));
      c.kill('SIGTERM');
      const late = setTimeout(() => c.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(late);
      // Its last lines may still be in the pipes; bounded, in case a child of its holds them.
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([closed, new Promise((r) => (grace = setTimeout(r, 1000)))]);
      clearTimeout(grace);
    },
    exitReport: () => report,
  };
}
