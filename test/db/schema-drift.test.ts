// src/db/schema.ts is written by hand beside the migrations. This test reads what it declares
// with the TypeScript checker (the row type Kysely selects, `Selectable<DB[table]>`) and holds
// it against the migrated database's information_schema: the same tables, the same columns,
// the same nullability, and a type of the matching kind. A migration without its schema.ts
// change (or the reverse) fails here rather than in production.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import ts from 'typescript';
import { fileURLToPath } from 'node:url';
import { createDatabase, type Database } from '../../src/db/database.ts';
import { freshDatabaseUrl } from '../helpers/database.ts';

/** Tables of the database that schema.ts leaves out on purpose. */
const UNDECLARED_TABLES = new Set(['schema_migrations']); // the migration runner's own

type Kind = 'string' | 'number' | 'boolean' | 'Date' | 'Buffer' | 'json';
interface Column {
  /** undefined: either (a JSON column typed `unknown`). */
  nullable: boolean | undefined;
  kind: Kind;
}

/** What PostgreSQL sends for each column type, once pg has parsed it (db/database.ts). */
const KIND_OF_PG: Record<string, Kind> = {
  text: 'string',
  'character varying': 'string',
  'USER-DEFINED': 'string', // enums (team_role)
  integer: 'number',
  smallint: 'number',
  bigint: 'number', // INT8 parsed to a number (db/database.ts)
  'double precision': 'number',
  boolean: 'boolean',
  'timestamp with time zone': 'Date',
  bytea: 'Buffer',
  jsonb: 'json',
  json: 'json',
  ARRAY: 'json',
  xid8: 'string', // a transaction id (migrations/0017): pg has no parser for it, so text
};

function declaredTables(): Map<string, Map<string, Column>> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const probe = `${root}test/db/__schema_probe__.ts`;
  const source = `import type { Selectable } from 'kysely';
import type { DB } from './../../src/db/schema.ts';
export declare const rows: { [T in keyof DB]: Selectable<DB[T]> };\n`;
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    types: ['node'],
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.readFile = (f) => (f === probe ? source : readFile(f));
  host.fileExists = (f) => f === probe || fileExists(f);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (f, lang, ...rest) =>
    f === probe ? ts.createSourceFile(f, source, lang) : getSourceFile(f, lang, ...rest);
  const program = ts.createProgram([probe], options, host);
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(probe);
  if (!file) throw new Error('probe not compiled');
  const rowsSymbol = checker.getExportsOfModule(checker.getSymbolAtLocation(file)!)[0]!;
  const rowsType = checker.getTypeOfSymbol(rowsSymbol);

  const kindOf = (t: ts.Type): Kind => {
    const name = checker.typeToString(t);
    if (t.flags & (ts.TypeFlags.StringLike | ts.TypeFlags.StringLiteral)) return 'string';
    if (t.flags & ts.TypeFlags.NumberLike) return 'number';
    if (t.flags & ts.TypeFlags.BooleanLike) return 'boolean';
    if (name === 'Date') return 'Date';
    if (name.startsWith('Buffer')) return 'Buffer';
    return 'json';
  };

  const tables = new Map<string, Map<string, Column>>();
  for (const table of rowsType.getProperties()) {
    const columns = new Map<string, Column>();
    const rowType = checker.getTypeOfSymbol(table);
    for (const column of rowType.getProperties()) {
      const type = checker.getTypeOfSymbol(column);
      const parts = type.isUnion() ? type.types : [type];
      // `unknown` (a JSON column) holds null as well as anything else.
      const unknown = parts.some((p) => p.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any));
      const nullable = unknown ? undefined : parts.some((p) => p.flags & ts.TypeFlags.Null);
      const kinds = new Set(
        parts.filter((p) => !(p.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined))).map(kindOf),
      );
      // `true | false` is boolean; a union of string literals is a string.
      const [kind] = kinds.size === 1 ? [...kinds] : ['json' as Kind];
      columns.set(column.name, { nullable, kind: kind ?? 'json' });
    }
    tables.set(table.name, columns);
  }
  return tables;
}

let db: Database;
beforeAll(async () => {
  db = createDatabase(await freshDatabaseUrl(), { max: 1 });
});
afterAll(() => db.destroy());

describe('src/db/schema.ts', () => {
  it('declares the tables, columns, nullability and kinds of the migrated database', async () => {
    const declared = declaredTables();
    expect(declared.size).toBeGreaterThan(20);
    const { rows } = await sql<{
      table_name: string;
      column_name: string;
      is_nullable: 'YES' | 'NO';
      data_type: string;
    }>`select table_name, column_name, is_nullable, data_type
       from information_schema.columns c
       join information_schema.tables t using (table_schema, table_name)
       where table_schema = 'public' and t.table_type = 'BASE TABLE'
       order by table_name, ordinal_position`.execute(db);

    const actual = new Map<string, Map<string, Column>>();
    for (const r of rows) {
      if (UNDECLARED_TABLES.has(r.table_name)) continue;
      const kind = KIND_OF_PG[r.data_type];
      if (!kind) throw new Error(`no kind for ${r.data_type} (${r.table_name}.${r.column_name})`);
      const columns = actual.get(r.table_name) ?? new Map<string, Column>();
      columns.set(r.column_name, { nullable: r.is_nullable === 'YES', kind });
      actual.set(r.table_name, columns);
    }

    const drift: string[] = [];
    for (const table of new Set([...declared.keys(), ...actual.keys()])) {
      const mine = declared.get(table);
      const theirs = actual.get(table);
      if (!mine) drift.push(`${table}: a table of the database that schema.ts does not declare`);
      else if (!theirs) drift.push(`${table}: declared in schema.ts, not in the database`);
      if (!mine || !theirs) continue;
      for (const column of new Set([...mine.keys(), ...theirs.keys()])) {
        const d = mine.get(column);
        const a = theirs.get(column);
        const at = `${table}.${column}`;
        if (!d) drift.push(`${at}: in the database, not declared`);
        else if (!a) drift.push(`${at}: declared, not in the database`);
        else {
          if (d.nullable !== undefined && d.nullable !== a.nullable)
            drift.push(
              `${at}: declared ${d.nullable ? '' : 'not '}nullable, database says otherwise`,
            );
          if (d.kind !== a.kind) drift.push(`${at}: declared ${d.kind}, database sends ${a.kind}`);
        }
      }
    }
    expect(drift).toEqual([]);
  });
});
