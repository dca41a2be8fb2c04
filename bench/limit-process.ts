// The stack's limit: what Fastify and `pg` alone serve on this machine and this database. One
// route, one indexed primary-key query (a project by id), no hooks, no auth, no schema, Fastify's
// default logger (none). Every read of the service is held against it (bench/run.ts).
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import pg from 'pg';
import { serve } from './ipc.ts';

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.POOL_SIZE),
});
let queries = 0;
const app = Fastify();
app.get<{ Params: { id: string } }>('/projects/:id', async (req, reply) => {
  queries++;
  const { rows } = await pool.query(
    'select id, name, owner_id, org_id, created_at from projects where id = $1',
    [req.params.id],
  );
  return rows[0] ?? reply.code(404).send({ error: 'not found' });
});

const ready = app.listen({ port: 0, host: '127.0.0.1' }).then(() => {
  const { port } = app.server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
});

serve(
  async (body: { type: 'url' | 'queries' | 'memory' }) => {
    const url = await ready;
    if (body.type === 'url') return url;
    if (body.type === 'queries') return queries;
    return process.memoryUsage().rss;
  },
  async () => {
    await app.close();
    await pool.end();
  },
);
