// The certificates the edge serves over HTTPS (CONTRACT 5b). The service orders them and keeps
// them; its desired state names, per frame, each host's certificate by fingerprint, and the
// edge fetches the ones it does not hold (certificates change rarely: a renewal every two months
// or so). Held in memory only, as TLS contexts: an agent that restarts fetches them again.
import { createSecureContext, type SecureContext } from 'node:tls';
import type { AgentLog } from '../log.ts';
import { normalizeHost } from './table.ts';

export interface FetchedCertificate {
  hostname: string;
  certificate: string;
  private_key: string;
  fingerprint: string;
}

/** Where the edge gets a host's certificate and a challenge's answer: the service. */
export interface CertificateSource {
  certificate(hostname: string): Promise<FetchedCertificate>;
  /** The key authorization of an HTTP-01 challenge; undefined when the service has none. */
  challenge(token: string): Promise<string | undefined>;
}

interface Held {
  fingerprint: string;
  context: SecureContext;
  pem: string;
}

/** A failed fetch is tried again on the next desired state after this long. */
const RETRY_MS = 30_000;

export class EdgeCertificates {
  private held = new Map<string, Held>();
  private fetching = new Map<string, string>();
  private failedAt = new Map<string, number>();
  private listeners = new Set<(host: string) => void>();

  constructor(
    private source: CertificateSource,
    private log: AgentLog,
  ) {}

  /**
   * Follows the certificates the desired state names (host → fingerprint): drops the others,
   * fetches the new and the renewed. Answers once the fetches it started have ended.
   */
  async follow(wanted: ReadonlyMap<string, string>): Promise<void> {
    for (const host of this.held.keys())
      if (!wanted.has(host)) {
        this.held.delete(host);
        this.told(host);
      }
    const now = Date.now();
    const fetches: Array<Promise<void>> = [];
    for (const [host, fingerprint] of wanted) {
      if (this.held.get(host)?.fingerprint === fingerprint) continue;
      if (this.fetching.get(host) === fingerprint) continue;
      if (now - (this.failedAt.get(host) ?? -Infinity) < RETRY_MS) continue;
      fetches.push(this.fetch(host, fingerprint));
    }
    await Promise.all(fetches);
  }

  private async fetch(host: string, fingerprint: string) {
    this.fetching.set(host, fingerprint);
    try {
      const c = await this.source.certificate(host);
      // Made here for the built-in plane, and so a pair that does not load is refused here.
      const context = createSecureContext({ cert: c.certificate, key: c.private_key });
      const pem = `${c.certificate.trim()}\n${c.private_key.trim()}\n`;
      this.held.set(host, { fingerprint: c.fingerprint, context, pem });
      this.failedAt.delete(host);
      this.told(host);
    } catch (err) {
      this.failedAt.set(host, Date.now());
      this.log.warn({ hostname: host, err: (err as Error).message }, 'certificate not fetched');
    } finally {
      if (this.fetching.get(host) === fingerprint) this.fetching.delete(host);
    }
  }

  /** The TLS context for a client's SNI name; undefined: the handshake fails (no name we hold). */
  context(servername: string): SecureContext | undefined {
    const host = normalizeHost(servername);
    return host === undefined ? undefined : this.held.get(host)?.context;
  }

  /** Whether the edge serves this Host over HTTPS (so plain HTTP redirects there). */
  has(host: string | undefined): boolean {
    const key = normalizeHost(host);
    return key !== undefined && this.held.has(key);
  }

  /** The certificate and key of a host, as one PEM (what HAProxy takes), with its fingerprint. */
  pem(host: string): { pem: string; fingerprint: string } | undefined {
    const h = this.held.get(host);
    return h && { pem: h.pem, fingerprint: h.fingerprint };
  }

  private told(host: string) {
    for (const l of this.listeners) l(host);
  }

  /** Calls `fn` with the host after each certificate taken in, renewed or dropped. */
  onChange(fn: (host: string) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The hosts it holds a certificate for. */
  hosts(): string[] {
    return [...this.held.keys()];
  }

  get size() {
    return this.held.size;
  }
}

/** Host → fingerprint, over every frame the desired state names. */
export function wantedCertificates(
  frames: ReadonlyArray<{
    certificates?: ReadonlyArray<{ hostname: string; fingerprint: string }>;
  }>,
): Map<string, string> {
  const wanted = new Map<string, string>();
  for (const f of frames)
    for (const c of f.certificates ?? []) {
      const host = normalizeHost(c.hostname);
      if (host) wanted.set(host, c.fingerprint);
    }
  return wanted;
}
