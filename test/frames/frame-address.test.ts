// A frame's hostname label and URL (src/frames/frame-address.ts, CONTRACT 5b): a table of names
// and edges, and properties over any name and id: the label is always a DNS label of at most 63
// characters, made of the name and the id alone.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  frameHostname,
  frameUrl,
  hostnameLabel,
  idPart,
  namePart,
} from '../../src/frames/frame-address.ts';
import { newId } from '../../src/ids.ts';

const ID = 'frm_01JNQ7R1S2T3V4W5X6Y7Z8A9BC';
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

describe('hostnameLabel', () => {
  it.each([
    ['web', 'web'],
    ['My Shop!', 'my-shop'],
    ['  --Hello__World--  ', 'hello-world'],
    ['API v2.1', 'api-v2-1'],
    ['Café Crème', 'caf-cr-me'],
    ['日本語', 'app'],
    ['!!!', 'app'],
    ['', 'app'],
    ['x😀y', 'x-y'],
    // Only ASCII letters are letters: the Kelvin sign is not a k (the SQL of 0023 agrees).
    ['\u212Aelvin', 'elvin'],
    ['a'.repeat(50), 'a'.repeat(40)],
    // Cut at 40, the `-` it ends on goes too.
    [`${'a'.repeat(39)} b`, 'a'.repeat(39)],
    [`${'a'.repeat(38)}-bcd`, `${'a'.repeat(38)}-b`],
  ])('%j has the name part %j', (name, part) => {
    expect(namePart(name)).toBe(part);
    expect(hostnameLabel(name, ID)).toBe(`${part}-z8a9bc`);
  });

  it('takes the last 6 characters of the id, lower-cased', () => {
    expect(idPart(ID)).toBe('z8a9bc');
    expect(frameHostname(hostnameLabel('web', ID), 'apps.example.com')).toBe(
      'web-z8a9bc.apps.example.com',
    );
  });

  it('differs for ids made in the same millisecond by one process', () => {
    const at = new Date();
    const ids = Array.from({ length: 100 }, () => newId('frame', at));
    expect(new Set(ids.map((id) => hostnameLabel('web', id))).size).toBe(100);
  });

  const crockford = [...'0123456789ABCDEFGHJKMNPQRSTVWXYZ'];
  const ids = fc.oneof(
    fc
      .string({ unit: fc.constantFrom(...crockford), minLength: 26, maxLength: 26 })
      .map((ulid) => `frm_${ulid}`),
    fc
      .date({ noInvalidDate: true, min: new Date('2020-01-01'), max: new Date('2100-01-01') })
      .map((d) => newId('frame', d)),
  );
  const names = fc.oneof(
    fc.string({ maxLength: 120 }),
    fc.string({ unit: 'grapheme', maxLength: 120 }),
    fc.string({ unit: 'binary', maxLength: 120 }),
    fc.string({ unit: fc.constantFrom(...'aZ09-_. '), maxLength: 120 }),
  );

  it('is always a DNS label of at most 63 characters, ending in its id part', () => {
    fc.assert(
      fc.property(names, ids, (name, id) => {
        const label = hostnameLabel(name, id);
        expect(label).toMatch(DNS_LABEL);
        expect(label.length).toBeLessThanOrEqual(63);
        expect(label.endsWith(`-${id.slice(-6).toLowerCase()}`)).toBe(true);
        expect(frameHostname(label, 'localhost')).toBe(`${label}.localhost`);
      }),
      { numRuns: 2000 },
    );
  });

  it('depends on the name and the id alone, and the name part is its own name part', () => {
    fc.assert(
      fc.property(names, ids, (name, id) => {
        expect(hostnameLabel(name, id)).toBe(hostnameLabel(`${name}`, `${id}`));
        const part = namePart(name);
        expect(namePart(part)).toBe(part);
        // Upper or lower, the same ASCII letters give the same label.
        const upper = name.replace(/[a-z]/g, (c) => c.toUpperCase());
        const lower = name.replace(/[A-Z]/g, (c) => c.toLowerCase());
        expect(hostnameLabel(upper, id)).toBe(hostnameLabel(lower, id));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('frameUrl', () => {
  const h = 'web-z8a9bc.localhost';
  it.each([
    [{ http: 8000, https: null }, `http://${h}:8000`],
    [{ http: 80, https: null }, `http://${h}`],
    [{ http: 80, https: 443 }, `https://${h}`],
    [{ http: 8000, https: 8443 }, `https://${h}:8443`],
    [{ http: null, https: null }, null],
  ])('for an edge on %j is %j', (edge, url) => {
    expect(frameUrl(h, edge)).toBe(url);
  });
});
