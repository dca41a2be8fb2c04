// The slug a client offers for a name (the CLI's create commands and the console's forms).
import { describe, expect, it } from 'vitest';
import { slugOf } from '../../src/sdk/index.ts';

const API_SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/;

describe('slugOf', () => {
  it.each([
    ['Web Team', 'web-team'],
    ['  Night   Shift!! ', 'night-shift'],
    ['Crème Brûlée', 'creme-brulee'],
    ['ACME 2', 'acme-2'],
    ['ﬁre', 'fire'],
    [`${'a'.repeat(62)} b`, 'a'.repeat(62)],
  ])('%s → %s, a slug the API takes', (name, slug) => {
    expect(slugOf(name)).toBe(slug);
    expect(slug).toMatch(API_SLUG);
  });

  it('falls back when nothing of the name is left', () => {
    expect(slugOf('!!!')).toBe('team');
    expect(slugOf('日本', 'org')).toBe('org');
  });
});
