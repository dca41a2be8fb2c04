// A DNS resolver that answers TXT look-ups from a table, injected into the services as the real
// resolver is (Core.dns). Names missing from the table answer as DNS does for a name that does
// not exist (ENOTFOUND); `fail` makes a name's look-up fail with a resolver error code.
import type { TxtResolver } from '../../src/domains/domain-verification.ts';

export interface TableResolver extends TxtResolver {
  /** Every look-up made, in order. */
  readonly lookups: string[];
  /** Publishes (adds) a TXT record. */
  add(name: string, value: string): void;
  /** Deletes every record of a name. */
  clear(name: string): void;
  fail(name: string, code: string): void;
}

export function tableResolver(): TableResolver {
  const records = new Map<string, string[]>();
  const failures = new Map<string, string>();
  const lookups: string[] = [];
  const dnsError = (code: string, name: string) =>
    Object.assign(new Error(`queryTxt ${code} ${name}`), { code, hostname: name });
  return {
    lookups,
    add(name, value) {
      records.set(name, [...(records.get(name) ?? []), value]);
    },
    clear(name) {
      records.delete(name);
      failures.delete(name);
    },
    fail(name, code) {
      failures.set(name, code);
    },
    async resolveTxt(name) {
      lookups.push(name);
      const code = failures.get(name);
      if (code) throw dnsError(code, name);
      const values = records.get(name);
      if (!values) throw dnsError('ENOTFOUND', name);
      // DNS splits a TXT record into strings of at most 255 characters.
      return values.map((v) => v.match(/.{1,255}/gs) ?? ['']);
    },
  };
}
