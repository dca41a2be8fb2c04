// What the agent's edge reads from the service with the agent's token, besides the sync: a
// host's certificate and an ACME challenge's answer (edge/certificates.ts). Both are small and
// rare; a read that fails is tried again by its caller.
import type { CertificateSource, FetchedCertificate } from './edge/certificates.ts';

const TIMEOUT_MS = 10_000;

export function serviceReads(server: string, token: string): CertificateSource {
  const base = server.replace(/\/+$/, '');
  const get = (path: string) =>
    fetch(`${base}${path}`, {
      headers: { authorization: `Bearer ${token}`, 'user-agent': 'frameplane-agent' },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  return {
    async certificate(hostname) {
      const res = await get(`/v2/agent/certificates/${encodeURIComponent(hostname)}`);
      if (res.status !== 200)
        throw new Error(`certificate of ${hostname}: the service answered ${res.status}`);
      return (await res.json()) as FetchedCertificate;
    },
    async challenge(token) {
      const res = await get(`/v2/agent/acme-challenges/${encodeURIComponent(token)}`);
      if (res.status === 404) return undefined;
      if (res.status !== 200) throw new Error(`challenge: the service answered ${res.status}`);
      return ((await res.json()) as { key_authorization: string }).key_authorization;
    },
  };
}
