// Runs inside a sandbox's network namespace (started by sandbox.sh, outside the app's pid
// namespace, with an empty environment): accepts connections on a Unix socket that the host can
// reach and pipes each one to 127.0.0.1:<port>, where the app listens. Plain JS, run by node.
//   node forwarder.mjs <socket path> <port> [<uid> <gid>]
// Given a uid (the sandbox of a root agent), it becomes that user once it listens: whatever a
// peer could do to it, it does without root.
import net from 'node:net';

const [socketPath, portArg, uidArg, gidArg] = process.argv.slice(2);
const port = Number(portArg);
if (!socketPath || !Number.isInteger(port) || port < 1 || port > 65535) {
  console.error('frameplane forwarder: usage: forwarder.mjs <socket path> <port>');
  process.exit(2);
}

const server = net.createServer({ allowHalfOpen: true }, (client) => {
  const app = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true });
  const drop = () => {
    client.destroy();
    app.destroy();
  };
  client.on('error', drop);
  app.on('error', drop);
  client.on('close', () => app.destroy());
  app.on('close', () => client.destroy());
  client.pipe(app);
  app.pipe(client);
});
server.on('error', (err) => {
  console.error(`frameplane forwarder: ${socketPath}: ${err.message}`);
  process.exit(1);
});
server.listen(socketPath, () => {
  if (uidArg !== undefined) {
    process.setgroups([]);
    process.setgid(Number(gidArg));
    process.setuid(Number(uidArg));
  }
  process.stdout.write('ready\n'); // sandbox.sh waits for this line before it goes on
});
