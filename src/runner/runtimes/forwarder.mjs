// Runs inside a sandbox's network namespace (started by sandbox.sh, outside the app's pid
// namespace, with an empty environment) and pipes connections both ways across its edge:
//   --expose SOCKET PORT  the host connects to the Unix socket SOCKET (bound here, a path the
//                         host can reach); each connection goes to 127.0.0.1:PORT, where the app
//                         listens;
//   --egress SOCKET PORT  the app connects to 127.0.0.1:PORT; each connection goes to the Unix
//                         socket SOCKET on the host, where the agent's egress proxy decides what
//                         may be reached. sandbox.sh soon replaces the host's root by the
//                         sandbox's, where SOCKET's path does not exist: its directory becomes
//                         our cwd now, and we connect to ./<name> (a cwd survives pivot_root).
// Plain JS, run by node:
//   node forwarder.mjs [--expose SOCKET PORT] [--egress SOCKET PORT] [--uid UID --gid GID]
// Given a uid (the sandbox of a root agent), it becomes that user once it listens: whatever a
// peer could do to it, it does without root. It prints "ready" once all of that is done.
import net from 'node:net';
import { basename, dirname } from 'node:path';

const fail = (message) => {
  console.error(`frameplane forwarder: ${message}`);
  process.exit(1);
};

const exposes = [];
const egresses = [];
let uid;
let gid;
const args = process.argv.slice(2);
for (let i = 0; i < args.length; ) {
  const [flag, a, b] = args.slice(i, i + 3);
  const port = Number(b);
  if ((flag === '--expose' || flag === '--egress') && a && Number.isInteger(port)) {
    if (port < 1 || port > 65535) fail(`bad port ${b}`);
    (flag === '--expose' ? exposes : egresses).push({ socketPath: a, port });
    i += 3;
  } else if ((flag === '--uid' || flag === '--gid') && /^\d+$/.test(a ?? '')) {
    if (flag === '--uid') uid = Number(a);
    else gid = Number(a);
    i += 2;
  } else {
    fail(
      'usage: forwarder.mjs [--expose SOCKET PORT] [--egress SOCKET PORT] [--uid UID --gid GID]',
    );
  }
}
if (egresses.length > 1) fail('one --egress at most'); // one cwd
if ((uid === undefined) !== (gid === undefined)) fail('--uid and --gid go together');

/** Pipes two sockets both ways; either end's error or close ends both. */
function pipe(a, b) {
  const drop = () => {
    a.destroy();
    b.destroy();
  };
  a.on('error', drop);
  b.on('error', drop);
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
  a.pipe(b);
  b.pipe(a);
}

if (egresses.length) process.chdir(dirname(egresses[0].socketPath));

const listening = [];
const listen = (server, where, ...args) =>
  new Promise((resolve) => {
    server.on('error', (err) => fail(`${where}: ${err.message}`));
    server.listen(...args, resolve);
  });
for (const { socketPath, port } of exposes) {
  const server = net.createServer({ allowHalfOpen: true }, (client) =>
    pipe(client, net.connect({ host: '127.0.0.1', port, allowHalfOpen: true })),
  );
  listening.push(listen(server, socketPath, socketPath));
}
for (const { socketPath, port } of egresses) {
  const name = `./${basename(socketPath)}`;
  const server = net.createServer({ allowHalfOpen: true }, (app) =>
    pipe(app, net.connect({ path: name, allowHalfOpen: true })),
  );
  listening.push(listen(server, `127.0.0.1:${port}`, port, '127.0.0.1'));
}
await Promise.all(listening);
if (uid !== undefined) {
  process.setgroups([]);
  process.setgid(gid);
  process.setuid(uid);
}
process.stdout.write('ready\n'); // sandbox.sh waits for this line before it goes on
