// Let's Encrypt's ACME test server (Debian's `pebble`), for the edge's tests (../shared/NOTES.md):
// its own listener's certificate made with openssl, validation for real (no
// PEBBLE_VA_ALWAYS_VALID) against the edge's HTTP port, and names resolved by
// `pebble-challtestsrv` as a DNS server of the test's own that answers 127.0.0.1 for every
// name: so the ACME server reaches this machine's edge, and nothing else is ever asked.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/smtp.ts';
import { selfSigned } from '../helpers/tls.ts';

export interface Pebble {
  /** The ACME directory, for ACME_DIRECTORY_URL. */
  directoryUrl: string;
  /** Pebble's listener's certificate, for NODE_EXTRA_CA_CERTS. */
  listenerCaFile: string;
  /** The root that signs what Pebble issues (PEM), to check an edge's chain against. */
  root(): Promise<string>;
  /** The test's DNS server (every name: 127.0.0.1), for DNS_SERVERS. */
  dnsPort: number;
  /** Publishes a TXT record there. */
  setTxt(name: string, value: string): Promise<void>;
  log(): string;
  stop(): Promise<void>;
}

export async function startPebble(edge: { httpPort: number; httpsPort: number }): Promise<Pebble> {
  const dir = mkdtempSync(join(tmpdir(), 'frameplane-pebble-'));
  const { certFile: cert, keyFile: key } = selfSigned(dir, 'listener', 'localhost', [
    'localhost',
    '127.0.0.1',
  ]);
  const [acmePort, managementPort, dnsPort, dnsManagementPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const config = join(dir, 'pebble.json');
  writeFileSync(
    config,
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${acmePort}`,
        managementListenAddress: `127.0.0.1:${managementPort}`,
        certificate: cert,
        privateKey: key,
        httpPort: edge.httpPort,
        tlsPort: edge.httpsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
      },
    }),
  );
  let log = '';
  const keep = (c: ChildProcess) => {
    c.stdout?.on('data', (d) => (log += d));
    c.stderr?.on('data', (d) => (log += d));
    return c;
  };
  const dns = keep(
    spawn(
      'pebble-challtestsrv',
      [
        '-dns01',
        `127.0.0.1:${dnsPort}`,
        '-http01',
        '',
        '-https01',
        '',
        '-tlsalpn01',
        '',
        '-management',
        `127.0.0.1:${dnsManagementPort}`,
        '-defaultIPv4',
        '127.0.0.1',
        '-defaultIPv6',
        '',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    ),
  );
  const pebble = keep(
    spawn('pebble', ['-config', config, '-dnsserver', `127.0.0.1:${dnsPort}`], {
      // No random sleeps before validation, no refused nonces: the tests measure the edge.
      env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const fetchText = (url: string) =>
    new Promise<string>((resolve, reject) => {
      get(url, { ca: readFileSync(cert, 'utf8') }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () =>
          res.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: ${res.statusCode}`)),
        );
      }).on('error', reject);
    });
  const directoryUrl = `https://127.0.0.1:${acmePort}/dir`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await fetchText(directoryUrl);
      break;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`pebble did not start: ${err}\n${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    directoryUrl,
    listenerCaFile: cert,
    root: () => fetchText(`https://127.0.0.1:${managementPort}/roots/0`),
    dnsPort,
    async setTxt(name, value) {
      const res = await fetch(`http://127.0.0.1:${dnsManagementPort}/set-txt`, {
        method: 'POST',
        body: JSON.stringify({ host: name.endsWith('.') ? name : `${name}.`, value }),
      });
      if (!res.ok) throw new Error(`set-txt: ${res.status} ${await res.text()}`);
    },
    log: () => log,
    async stop() {
      for (const c of [pebble, dns]) {
        if (c.exitCode !== null || c.signalCode !== null) continue;
        const gone = new Promise((r) => c.once('exit', r));
        c.kill('SIGTERM');
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
