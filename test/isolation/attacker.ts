// A tenant's app that tries, as an attacker would, every way out of its runtime: the service's
// files, the agent's state, the service's database (embedded socket, loopback TCP, the host as a
// container sees it), the service's process (its environment, a signal), the Docker socket,
// writing outside its own directory. GET / answers what each attempt got, as JSON; a test asserts every attempt failed.
import { git } from '../runner/fixture.ts';
import { expect } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SERVER = String.raw`
const fs = require('fs'), net = require('net'), http = require('http');
const E = process.env;
const out = {};
function read(name, p) { try { out[name] = 'READ ' + fs.readFileSync(p, 'utf8').slice(0, 60); } catch (e) { out[name] = e.code || String(e); } }
function list(name, p) { try { out[name] = 'LISTED ' + fs.readdirSync(p).join(','); } catch (e) { out[name] = e.code || String(e); } }
function write(name, p) { try { fs.writeFileSync(p, 'pwned'); out[name] = 'WROTE ' + p; } catch (e) { out[name] = e.code || String(e); } }
function dial(name, opts) {
  return new Promise((done) => {
    const s = net.connect(opts);
    const end = (v) => { out[name] = v; s.destroy(); done(); };
    s.setTimeout(1500, () => end('TIMEOUT'));
    s.once('connect', () => end('CONNECTED'));
    s.once('error', (e) => end(e.code || String(e)));
  });
}
function gateway() {
  try {
    for (const line of fs.readFileSync('/proc/net/route', 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[1] === '00000000' && f[2]) return f[2].match(/../g).reverse().map((h) => parseInt(h, 16)).join('.');
    }
  } catch {}
  return undefined;
}
async function attempts() {
  const D = E.TARGET_DATA_DIR;
  read('secret_key', D + '/secret.key');
  read('builtin_agent_token', D + '/builtin-agent.json');
  read('postmaster_pid', D + '/postgres/postmaster.pid');
  read('agent_state', D + '/agent/agent-state.json');
  list('data_dir', D);
  // The process runtime's replica sockets: an app that could swap its own for a link would
  // have the agent carry its traffic to any socket of the host (the Docker Engine's, say).
  list('agent_sockets', D + '/agent/sockets');
  try { for (const n of fs.readdirSync(D + '/agent/sockets')) { fs.symlinkSync('/var/run/docker.sock', D + '/agent/sockets/' + n + '/evil'); out.swap_socket = 'WROTE ' + n; } } catch (e) { out.swap_socket = e.code || String(e); }
  read('service_environ', '/proc/' + E.TARGET_PID + '/environ');
  read('service_cmdline', '/proc/' + E.TARGET_PID + '/cmdline');
  // SIGCONT does the service no harm: only whether it could be signalled at all counts.
  try { process.kill(Number(E.TARGET_PID), 'SIGCONT'); out.signal_service = 'SIGNALLED'; } catch (e) { out.signal_service = e.code || String(e); }
  write('write_service_source', E.TARGET_SOURCE + '/pwned.txt');
  write('write_etc', '/etc/pwned.txt');
  if (E.TARGET_PG_SOCKET) await dial('pg_socket', { path: E.TARGET_PG_SOCKET });
  for (const [i, hp] of (E.TARGET_TCP || '').split(',').filter(Boolean).entries()) {
    const [host, port] = hp.split(':');
    await dial('tcp_' + i + '_' + host + '_' + port, { host, port: Number(port) });
  }
  const gw = gateway();
  // Only a gateway that Docker made on this machine (a container's view of the host), never the machine's own route out.
  if (gw && /^172\.(1[6-9]|2[0-9]|3[01])\./.test(gw)) for (const port of (E.TARGET_GATEWAY_PORTS || '').split(',').filter(Boolean)) await dial('gateway_' + gw + '_' + port, { host: gw, port: Number(port) });
  await dial('docker_socket', { path: '/var/run/docker.sock' });
  return out;
}
let verdict;
http.createServer(async (req, res) => {
  if (req.url === '/verdict') { verdict ??= await attempts(); res.setHeader('content-type', 'application/json'); return res.end(JSON.stringify({ uid: process.getuid && process.getuid(), verdict })); }
  res.end('attacker ready');
}).listen(Number(E.PORT), () => console.log('attacker listening'));
`;

/** A bare repository <root>/git/acme/attacker.git holding the app; GIT_BASE_URL is file://<root>/git. */
export function attackerRepo(root: string): string {
  const gitRoot = join(root, 'git');
  const bare = join(gitRoot, 'acme', 'attacker.git');
  const work = join(root, 'attacker-work');
  mkdirSync(work, { recursive: true });
  git(root, 'init', '-q', '--bare', bare);
  git(root, 'init', '-q', work);
  writeFileSync(
    join(work, 'package.json'),
    JSON.stringify({ name: 'attacker', private: true, scripts: { start: 'node server.js' } }),
  );
  writeFileSync(join(work, 'server.js'), SERVER);
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'attacker');
  git(work, 'push', '-q', bare, 'HEAD:main');
  return `file://${gitRoot}`;
}

/**
 * Attempts that got through: anything read, written or connected, or a listing that shows more
 * than the empty skeleton leading to the app's own checkout (the process runtime shows its
 * code at its own path, so DATA_DIR/agent exists inside, empty but for that path).
 */
export function breaches(
  verdict: Record<string, string>,
  skeleton = ['agent'],
): Record<string, string> {
  const leaks = (v: string) =>
    /^(READ|WROTE|CONNECTED|SIGNALLED)/.test(v) ||
    (v.startsWith('LISTED ') &&
      v
        .slice(7)
        .split(',')
        .some((n) => n && !skeleton.includes(n)));
  return Object.fromEntries(Object.entries(verdict).filter(([, v]) => leaks(v)));
}

/** The assertions every runtime's isolation test makes: many attempts, none through, not root. */
export function expectIsolated(
  r: { uid: number; verdict: Record<string, string>; logs: string },
  uid?: number,
) {
  console.log(`[isolation] ${JSON.stringify(r.verdict)}`);
  expect(Object.keys(r.verdict).length, r.logs).toBeGreaterThanOrEqual(12);
  expect(breaches(r.verdict), JSON.stringify(r.verdict, null, 1)).toEqual({});
  if (uid !== undefined) expect(r.uid).toBe(uid);
}
