// Custom domains through HTTP: a claim, its TXT record published in the test's DNS table
// (helpers/dns.ts), and the verification, as an owner does it.
import { expect } from 'vitest';
import type { TestApp } from './app.ts';
import { framePath } from './frames.ts';

type FrameRef = { project_id: string; space_id: string; id: string };

/** Claims `hostname` for the frame (201 expected) and answers the pending domain. */
export async function claimDomain(t: TestApp, token: string, f: FrameRef, hostname: string) {
  const r = await t.post(`${framePath(f)}/domains`, { token, body: { hostname } });
  expect(r.status, r.text).toBe(201);
  return r.json;
}

/** Publishes the claim's TXT record in the test's DNS. */
export function publish(t: TestApp, domain: { verification: { name: string; value: string } }) {
  t.dns.add(domain.verification.name, domain.verification.value);
}

export const verify = (t: TestApp, token: string, f: FrameRef, domainId: string) =>
  t.post(`${framePath(f)}/domains/${domainId}/verify`, { token });

/** Claims, publishes and verifies: the hostname is then attached to the frame and routed. */
export async function verifiedDomain(t: TestApp, token: string, f: FrameRef, hostname: string) {
  const claim = await claimDomain(t, token, f, hostname);
  publish(t, claim);
  const r = await verify(t, token, f, claim.id);
  expect(r.status, r.text).toBe(200);
  return r.json;
}
