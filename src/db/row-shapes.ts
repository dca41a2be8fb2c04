// The shape of a statement's rows, worked out once per column list instead of once per
// execution. pg describes the result of every execution (its RowDescription) and, in its
// Result#addFields, looks up a parser per column and builds the empty row that each row is a
// copy of, by adding every column to a null-prototype object and spreading it: 18 to 22 µs for
// the frame read's 50 columns, on every frame read that is not remembered. Here a column list
// seen before (same names, types and formats, in order) gets the parsers and empty row it got
// the first time: about 1.3 µs for those 50 columns, most of it comparing the names.
// (Measured in-process on this 2-core machine, 100,000 calls each, column names as pg's parser
// makes them.) Pinned in test/db/library-internals.test.ts.
import { createRequire } from 'node:module';
import pg from 'pg';

// pg's Result is not exported by its index (nor typed): this is the class its Query uses.
const Result = createRequire(import.meta.url)('pg/lib/result.js') as { prototype: object };

interface Field {
  name: string;
  dataTypeID: number;
  format: string;
}
interface Shape {
  fields: Field[];
  parsers: Array<(value: string) => unknown>;
  row: Record<string, null>;
}
interface Types {
  getTypeParser(oid: number, format: 'text'): (value: string) => unknown;
}
interface ResultInternals {
  fields: Field[];
  /** The client's type parsers (pg gives every client's results its own TypeOverrides). */
  _types?: Types;
  _parsers?: Shape['parsers'];
  _prebuiltEmptyResultObject: Record<string, null> | null;
}

/** Distinct column lists remembered per column count: our statements' are a few dozen. */
const MAX_PER_LENGTH = 64;

function sameFields(known: Field[], fields: Field[]) {
  for (let i = 0; i < fields.length; i++) {
    const a = known[i] as Field;
    const b = fields[i] as Field;
    if (a.name !== b.name || a.dataTypeID !== b.dataTypeID || a.format !== b.format) return false;
  }
  return true;
}

function shapeOf(fields: Field[], types: Types): Shape {
  const row: Record<string, null> = {};
  for (const f of fields) row[f.name] = null;
  return {
    // Copies: pg's field objects belong to one execution's message.
    fields: fields.map(({ name, dataTypeID, format }) => ({ name, dataTypeID, format })),
    parsers: fields.map((f) => types.getTypeParser(f.dataTypeID, (f.format || 'text') as 'text')),
    row,
  };
}

export function installRowShapes() {
  const proto = Result.prototype as ResultInternals & {
    addFields(fields: Field[]): void;
  };
  const original = proto.addFields;
  if ((original as { shapes?: true }).shapes) return;
  // Per set of type parsers: each client's, which are pg's global ones unless the client was
  // given others. (A parser set on a client after its first query would not be seen: we set
  // none.)
  const shapes = new WeakMap<Types, Map<number, Shape[]>>();
  const addFields = function (this: ResultInternals, fields: Field[]) {
    const types = this._types ?? (pg.types as Types);
    let byLength = shapes.get(types);
    if (!byLength) {
      byLength = new Map();
      shapes.set(types, byLength);
    }
    const known = byLength.get(fields.length) ?? [];
    if (known.length === 0) byLength.set(fields.length, known);
    let shape = known.find((s) => sameFields(s.fields, fields));
    if (!shape) {
      shape = shapeOf(fields, types);
      if (known.length < MAX_PER_LENGTH) known.push(shape);
    }
    this.fields = fields;
    // Shared: pg only reads them (parseRow copies the empty row, then sets the copy's columns).
    this._parsers = shape.parsers;
    this._prebuiltEmptyResultObject = shape.row;
  };
  proto.addFields = Object.assign(addFields, { shapes: true as const });
}
