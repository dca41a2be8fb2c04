// `frameplane agent`: the reference agent on the command line. Loaded by bin/frameplane.mjs.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { agentLogger } from './log.ts';
import { startAgent } from './agent.ts';

const USAGE = `Usage: frameplane agent --server URL --token TOKEN [options]

Runs the frames that a Frameplane service places on this agent, as local processes (no Docker).

Options:
  --server URL           the Frameplane service (env FRAMEPLANE_SERVER)
  --token TOKEN          the agent token, shown once at registration (env FRAMEPLANE_AGENT_TOKEN;
                         prefer the variable: arguments are visible to every user in ps)
  --data DIR             state, checkouts and logs (env FRAMEPLANE_AGENT_DATA; default ./frameplane-agent)
  --host HOST            address the frame ports listen on (env FRAME_HOST; default 127.0.0.1)
  --git-base-url URL     where repositories live: https://host, file:///dir or /dir, holding
                         <owner>/<repo>.git (env GIT_BASE_URL; default https://github.com)
  --stop-frames-on-exit  stop every frame when the agent exits (default: leave them running;
                         the next start of the agent adopts them)
  -h, --help             this help
`;

function fail(message: string): never {
  process.stderr.write(`frameplane: ${message}\n\n${USAGE}`);
  process.exit(2);
}

async function agentCommand(args: string[]) {
  let values;
  try {
    ({ values } = parseArgs({
      args, allowPositionals: false, strict: true,
      options: {
        server: { type: 'string' }, token: { type: 'string' }, data: { type: 'string' }, host: { type: 'string' },
        'git-base-url': { type: 'string' }, 'stop-frames-on-exit': { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    fail((err as Error).message);
  }
  if (values.help) { process.stdout.write(USAGE); return; }
  const server = values.server ?? process.env.FRAMEPLANE_SERVER;
  const token = values.token ?? process.env.FRAMEPLANE_AGENT_TOKEN;
  if (!server) fail('--server is required');
  if (!token) fail('--token (or FRAMEPLANE_AGENT_TOKEN) is required');
  try { new URL(server); } catch { fail(`--server must be a URL, got "${server}"`); }

  const log = agentLogger();
  const agent = await startAgent({
    server, token, log,
    dataDir: resolve(values.data ?? process.env.FRAMEPLANE_AGENT_DATA ?? './frameplane-agent'),
    host: values.host ?? process.env.FRAME_HOST ?? '127.0.0.1',
    gitBaseUrl: values['git-base-url'] ?? process.env.GIT_BASE_URL ?? 'https://github.com',
    stopFramesOnExit: values['stop-frames-on-exit'] ?? false,
  });
  const exit = (why: string) => {
    log.info({ why }, 'stopping');
    void agent.stop().then(() => process.exit(0), (err) => { log.error({ err }, 'error while stopping'); process.exit(1); });
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => exit(signal));
  if (process.env.FRAMEPLANE_AGENT_EXIT_WITH_PARENT === '1') {
    // Run by the service (the built-in cloud): a service killed outright must not leave its
    // agent behind, holding the data directory that the next start's agent needs.
    const parent = process.ppid;
    setInterval(() => { if (process.ppid !== parent) exit('parent exited'); }, 1000).unref();
  }
}

export async function main(argv: string[]) {
  const [command, ...rest] = argv;
  if (!command || command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write(`Usage: frameplane <command>\n\nCommands:\n  agent   run frames on this machine (frameplane agent --help)\n`);
    return;
  }
  if (command === 'agent') return agentCommand(rest);
  fail(`unknown command "${command}"`);
}

await main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`frameplane: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
