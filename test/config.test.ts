// Defaults that depend on the machine, and settings read from the environment (src/config.ts).
import { describe, expect, it } from 'vitest';
import { defaultSharedBuffersMb, loadConfig } from '../src/config.ts';

const GiB = 2 ** 30;

describe('the embedded PostgreSQL shared_buffers', () => {
  it.each([
    [0.5 * GiB, 128], // PostgreSQL's own default is the floor
    [1 * GiB, 128],
    [2 * GiB, 256],
    [4 * GiB, 512],
    [8 * GiB, 1024],
    [24 * GiB, 1024], // at most 1 GB: the service and the frames share the machine
  ])('with %d bytes of memory: %d MB', (memory, mb) => {
    expect(defaultSharedBuffersMb(memory)).toBe(mb);
  });

  it('EMBEDDED_SHARED_BUFFERS_MB overrides it, and a bad value is refused', () => {
    expect(loadConfig({ EMBEDDED_SHARED_BUFFERS_MB: '64' }).embeddedSharedBuffersMb).toBe(64);
    expect(loadConfig({}).embeddedSharedBuffersMb).toBe(defaultSharedBuffersMb());
    expect(() => loadConfig({ EMBEDDED_SHARED_BUFFERS_MB: '1GB' })).toThrow(
      'EMBEDDED_SHARED_BUFFERS_MB must be an integer >= 16, got "1GB"',
    );
  });
});

describe('FRAMES_ON_EXIT', () => {
  it('is auto by default, stop or keep when set, and anything else is refused', () => {
    expect(loadConfig({}).framesOnExit).toBe('auto');
    expect(loadConfig({ FRAMES_ON_EXIT: '' }).framesOnExit).toBe('auto');
    expect(loadConfig({ FRAMES_ON_EXIT: 'stop' }).framesOnExit).toBe('stop');
    expect(loadConfig({ FRAMES_ON_EXIT: 'keep' }).framesOnExit).toBe('keep');
    expect(() => loadConfig({ FRAMES_ON_EXIT: 'yes' })).toThrow(
      'FRAMES_ON_EXIT must be one of auto, stop, keep, got "yes"',
    );
  });
});

describe('addresses (CONTRACT 5b)', () => {
  it('APPS_DOMAIN is localhost by default, kept lower-cased without a trailing dot', () => {
    expect(loadConfig({}).appsDomain).toBe('localhost');
    expect(loadConfig({ APPS_DOMAIN: '' }).appsDomain).toBe('localhost');
    expect(loadConfig({ APPS_DOMAIN: 'Apps.Example.COM.' }).appsDomain).toBe('apps.example.com');
    expect(loadConfig({ APPS_DOMAIN: 'my-apps.test' }).appsDomain).toBe('my-apps.test');
  });

  it.each([
    'apps..example.com',
    '-apps.example.com',
    'apps_example.com',
    'apps.example.com:8000',
    'http://apps.example.com',
    '*.example.com',
    '127.0.0.1',
    `${'a'.repeat(64)}.com`,
    `${'abcdefghi.'.repeat(20)}example.com`, // 211 characters
  ])('APPS_DOMAIN %j is refused', (domain) => {
    expect(() => loadConfig({ APPS_DOMAIN: domain })).toThrow(/^APPS_DOMAIN must be a DNS name/);
  });

  it('EDGE_HTTP_PORT is 8000 and EDGE_HTTPS_PORT 443 by default; each is a port', () => {
    expect(loadConfig({})).toMatchObject({ edgeHttpPort: 8000, edgeHttpsPort: 443 });
    expect(loadConfig({ EDGE_HTTP_PORT: '80', EDGE_HTTPS_PORT: '8443' })).toMatchObject({
      edgeHttpPort: 80,
      edgeHttpsPort: 8443,
    });
    for (const bad of ['0', '65536', '80.5', 'http'])
      expect(() => loadConfig({ EDGE_HTTP_PORT: bad })).toThrow(
        `EDGE_HTTP_PORT must be a port number (1..65535), got "${bad}"`,
      );
    expect(() => loadConfig({ EDGE_HTTPS_PORT: '-1' })).toThrow(/^EDGE_HTTPS_PORT must be a port/);
  });

  it('refuses an edge on the port of the service beside it, or both edge ports alike', () => {
    expect(() => loadConfig({ PORT: '8000' })).toThrow(/EDGE_HTTP_PORT must differ from PORT/);
    // Without the built-in cloud, no edge runs beside the service.
    expect(loadConfig({ PORT: '8000', CLOUD_AGENT: 'none' }).edgeHttpPort).toBe(8000);
    expect(() => loadConfig({ EDGE_HTTP_PORT: '443' })).toThrow(
      'EDGE_HTTPS_PORT must differ from EDGE_HTTP_PORT (both 443)',
    );
  });
});

describe('METRICS_PORT', () => {
  it('is unset by default; a port other than PORT when set', () => {
    expect(loadConfig({}).metricsPort).toBeUndefined();
    expect(loadConfig({ METRICS_PORT: '' }).metricsPort).toBeUndefined();
    expect(loadConfig({ METRICS_PORT: '9464' }).metricsPort).toBe(9464);
    for (const bad of ['0', '65536', '9464.5', 'metrics'])
      expect(() => loadConfig({ METRICS_PORT: bad })).toThrow(
        `METRICS_PORT must be a port number (1..65535), got "${bad}"`,
      );
    expect(() => loadConfig({ PORT: '9464', METRICS_PORT: '9464' })).toThrow(
      /^METRICS_PORT must differ from PORT \(both 9464\)/,
    );
  });
});

describe('ACME and DNS', () => {
  it('ACME_DIRECTORY_URL turns TLS on; it must be https; ACME_EMAIL only beside it', () => {
    expect(loadConfig({}).acme).toBeUndefined();
    expect(
      loadConfig({ ACME_DIRECTORY_URL: 'https://127.0.0.1:14000/dir', ACME_EMAIL: 'a@b.test' })
        .acme,
    ).toEqual({ directoryUrl: 'https://127.0.0.1:14000/dir', email: 'a@b.test' });
    expect(loadConfig({ ACME_DIRECTORY_URL: 'https://acme.test/dir' }).acme?.email).toBeUndefined();
    expect(() => loadConfig({ ACME_DIRECTORY_URL: 'http://acme.test/dir' })).toThrow(
      /must be an https URL/,
    );
    expect(() => loadConfig({ ACME_DIRECTORY_URL: 'acme' })).toThrow(/must be a URL/);
    expect(() => loadConfig({ ACME_EMAIL: 'a@b.test' })).toThrow(/without ACME_DIRECTORY_URL/);
    expect(() =>
      loadConfig({ ACME_DIRECTORY_URL: 'https://acme.test/dir', ACME_EMAIL: 'nobody' }),
    ).toThrow(/ACME_EMAIL must be an e-mail address/);
  });

  it.each([
    ['', undefined],
    ['127.0.0.1', ['127.0.0.1']],
    ['127.0.0.1:5353, [::1]:53,::1', ['127.0.0.1:5353', '[::1]:53', '::1']],
  ])('DNS_SERVERS %j is %j', (raw, servers) => {
    expect(loadConfig({ DNS_SERVERS: raw }).dnsServers).toEqual(servers);
  });

  it.each(['dns.example.test', '127.0.0.1:0', '127.0.0.1:70000', '[::1', '1.2.3'])(
    'DNS_SERVERS %j is refused',
    (raw) => {
      expect(() => loadConfig({ DNS_SERVERS: raw })).toThrow(/^DNS_SERVERS must list/);
    },
  );
});
