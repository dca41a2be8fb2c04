// HTTPS on the HAProxy plane: the certificates the edge holds (certificates.ts, fetched from the
// service) are given to HAProxy through its Runtime API, in memory only (never written to a
// file), and changed there when they are renewed or dropped; a map says which hosts have one,
// so that plain HTTP redirects them. The ACME server's HTTP-01 challenges, which HAProxy passes
// on, are answered by the agent on a Unix socket in its own directory, as the built-in plane
// answers them (acme-answers.ts).
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { answerChallenge } from '../acme-answers.ts';
import type { CertificateSource, EdgeCertificates } from '../certificates.ts';
import { ACME_SOCKET, CRT_LIST, TLS_MAP } from './config.ts';
import type { RuntimeApi } from './runtime-api.ts';

export interface HaproxyTlsOptions {
  dir: string;
  certificates: EdgeCertificates;
  source: CertificateSource;
  /** Where a certificate HAProxy refused is told. */
  onError?: (err: Error, host: string) => void;
}

/** Hosts as the table keeps them (normalizeHost): safe on a Runtime API command line. */
const SAFE_HOST = /^[a-z0-9.-]{1,253}$/;
const ok = (a: string) => a.includes('Success') || /^(New|Transaction|Entry|Certificate)/.test(a);

export class HaproxyTls {
  /** Per host, the fingerprint HAProxy serves; `created`: its store exists there. */
  private loaded = new Map<string, string>();
  private created = new Set<string>();
  private applying: Promise<void> = Promise.resolve();
  private stopListening?: () => void;
  private answers?: Server;
  private lookups = { inFlight: 0 };

  constructor(
    private api: RuntimeApi,
    private o: HaproxyTlsOptions,
  ) {}

  /** Answers challenges, and loads the certificates held now and from now on. */
  async start(): Promise<void> {
    const answers = createServer((req, res) => {
      void answerChallenge(req, res, this.lookups, this.o.source);
    });
    this.answers = answers;
    await new Promise<void>((resolve, reject) => {
      answers.once('error', reject);
      answers.listen(join(this.o.dir, ACME_SOCKET), () => resolve());
    });
    this.stopListening = this.o.certificates.onChange((host) => this.queue(host));
    for (const host of this.o.certificates.hosts()) this.queue(host);
    await this.applying;
  }

  private queue(host: string) {
    this.applying = this.applying
      .then(() => this.apply(host))
      .catch((err: Error) => this.o.onError?.(err, host));
  }

  /** Makes HAProxy hold what the edge holds for the host: its certificate, or none. */
  private async apply(host: string) {
    if (!SAFE_HOST.test(host)) throw new Error('not a host name HAProxy is given');
    const held = this.o.certificates.pem(host);
    const loaded = this.loaded.get(host);
    if (held?.fingerprint === loaded) return;
    const name = join(this.o.dir, 'certificates', `${host}.pem`);
    const list = join(this.o.dir, CRT_LIST);
    const map = join(this.o.dir, TLS_MAP);
    if (!held) {
      // The redirect goes first, then the handshake.
      await this.api.command(`del map ${map} ${host}`);
      await this.api.expect(`del ssl crt-list ${list} ${name}`, ok);
      await this.api.expect(`del ssl cert ${name}`, ok);
      this.loaded.delete(host);
      this.created.delete(host);
      return;
    }
    if (!this.created.has(host)) {
      await this.api.expect(`new ssl cert ${name}`, ok);
      this.created.add(host);
    }
    // A payload ends at an empty line (the one RuntimeApi ends each command with).
    await this.api.expect(`set ssl cert ${name} <<\n${held.pem.trimEnd()}\n`, ok);
    await this.api.expect(`commit ssl cert ${name}`, ok);
    if (loaded === undefined) {
      await this.api.expect(`add ssl crt-list ${list} ${name}`, ok);
      await this.api.expect(`add map ${map} ${host} 1`, (a) => a === '');
    }
    this.loaded.set(host, held.fingerprint);
  }

  /** Resolves once HAProxy holds what the edge held when called. */
  settled(): Promise<void> {
    return this.applying;
  }

  async close(): Promise<void> {
    this.stopListening?.();
    await new Promise<void>((resolve) =>
      this.answers ? this.answers.close(() => resolve()) : resolve(),
    );
  }
}
