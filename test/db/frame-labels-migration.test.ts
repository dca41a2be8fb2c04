// migrations/0023 gives the frames that existed before it the hostname label a new frame gets
// (src/frames/frame-address.ts), in SQL: run on a database migrated up to 0022 that holds frames
// of all sorts of names, it writes the label the function makes of each, and a label two of them
// would share goes to the older one.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { hostnameLabel } from '../../src/frames/frame-address.ts';

const MIGRATIONS = fileURLToPath(new URL('../../migrations/', import.meta.url));
const ADDRESSES = '0023_frame_addresses.sql';

let admin: pg.Client;
let db: pg.Client;
const name = `${inject('pgPrefix')}labels_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(inject('pgAdminUrl'));
  url.pathname = `/${name}`;
  db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
  const before = readdirSync(MIGRATIONS)
    .filter((f) => f.endsWith('.sql') && f < ADDRESSES)
    .sort();
  for (const file of before) await db.query(readFileSync(`${MIGRATIONS}${file}`, 'utf8'));
});
afterAll(async () => {
  await db?.end();
  await admin?.query(`drop database if exists ${name} with (force)`);
  await admin?.end();
});

const NAMES = [
  'web',
  'My Shop!',
  '  --Hello__World--  ',
  'Café Crème',
  '日本語',
  '!!!',
  'x😀y',
  '\u212Aelvin',
  'İstanbul',
  'Straße',
  'a'.repeat(50),
  `${'a'.repeat(39)} b`,
  `${'B'.repeat(38)}-cde`,
  'tab\there',
];

it('labels every frame as a new frame is labelled, the older of two alike first', async () => {
  await db.query(`insert into users (id, email, password_hash, created_at)
    values ('usr_1', 'ann@example.com', 'x', now())`);
  await db.query(`insert into projects (id, owner_id, name, created_at)
    values ('prj_1', 'usr_1', 'P', now())`);
  await db.query(`insert into spaces (id, project_id, name, created_at)
    values ('spc_1', 'prj_1', 'default', now())`);
  const ulid = (i: number) =>
    `01JNQ7R1S2T3V4W5X6${String(i).padStart(2, '0')}Z8A9B${'CDEFGHJKMNPQRSTV'[i]}`;
  const frames = NAMES.map((n, i) => ({ id: `frm_${ulid(i)}`, name: n }));
  // Same name, same last 6 characters: the newer one takes the 6 characters before those.
  const older = { id: 'frm_01JNQ7R1S2T3V4W5X6YYQ7Q7Q7', name: 'twin' };
  const newer = { id: 'frm_01JNQ7R1S2T3V4W5X7ABQ7Q7Q7', name: 'Twin!' };
  for (const f of [...frames, newer, older])
    await db.query(
      `insert into frames (id, project_id, space_id, owner_id, name, git_repository,
        git_repository_owner, git_repository_branch, port, runtime_kind, created_at, updated_at)
      values ($1, 'prj_1', 'spc_1', 'usr_1', $2, 'app', 'acme', 'main', 3000, 'cloud', now(),
        now())`,
      [f.id, f.name],
    );

  await db.query(readFileSync(`${MIGRATIONS}${ADDRESSES}`, 'utf8'));

  const { rows } = await db.query('select id, hostname_label from frames');
  const labels = new Map(rows.map((r) => [r.id, r.hostname_label]));
  for (const f of [...frames, older])
    expect(labels.get(f.id), JSON.stringify(f.name)).toBe(hostnameLabel(f.name, f.id));
  expect(labels.get(newer.id)).toBe('twin-w5x7ab');
  // NOT NULL and unique from now on.
  await expect(
    db.query(`update frames set hostname_label = $1 where id = $2`, [
      labels.get(older.id),
      newer.id,
    ]),
  ).rejects.toThrow(/frames_hostname_label_key/);
  const column = await db.query(`select is_nullable from information_schema.columns
    where table_name = 'frames' and column_name = 'hostname_label'`);
  expect(column.rows).toEqual([{ is_nullable: 'NO' }]);
});
