// A self-signed certificate made with openssl, for a test's own TLS listeners.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A P-256 key and a certificate for `names` (DNS names or IPs), valid 2 days, in `dir`. */
export function selfSigned(dir: string, file: string, subject: string, names: string[]) {
  const key = join(dir, `${file}.key`);
  const cert = join(dir, `${file}.pem`);
  const san = names.map((n) => (/^[\d.]+$|:/.test(n) ? `IP:${n}` : `DNS:${n}`)).join(',');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      `/CN=${subject}`,
      '-addext',
      `subjectAltName=${san}`,
    ],
    { stdio: 'ignore' },
  );
  return {
    keyFile: key,
    certFile: cert,
    key: readFileSync(key, 'utf8'),
    cert: readFileSync(cert, 'utf8'),
  };
}
