// The container tests' infrastructure: the daemon, the offline base image, memory limits, swarm.
import { describe, expect, inject, it } from 'vitest';
import { TEST_LABEL, dockerApi, dockerCall, ping } from './docker.ts';
import { links } from './host-state.ts';
import { runContainer } from './run.ts';

const host = inject('dockerHost');
const image = inject('frameBaseImage');

describe('container test infrastructure', () => {
  it('the daemon answers, and DOCKER_HOST / FRAME_BASE_IMAGE reach child processes', async () => {
    expect(await ping(host)).toBe(true);
    const v = await dockerCall(host, 'GET', '/version');
    expect(v.ApiVersion).toMatch(/^1\.\d+$/);
    expect(image).toBe(`local/frameplane-node:${process.versions.node}`);
  });

  it('the base image runs node, npm and sh as uid 1000', async () => {
    const node = await runContainer(
      host,
      image,
      [
        'node',
        '-e',
        'console.log(process.version, process.getuid(), process.getgid(), require("os").userInfo().username, require("os").homedir())',
      ],
      { user: '1000:1000' },
    );
    expect(node.exitCode, node.stderr).toBe(0);
    expect(node.stdout.trim()).toBe(`${process.version} 1000 1000 app /home/app`);

    const npm = await runContainer(host, image, ['npm', '--version'], { user: '1000:1000' });
    expect(npm.exitCode, npm.stderr).toBe(0);
    expect(npm.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);

    const sh = await runContainer(
      host,
      image,
      [
        'sh',
        '-c',
        'id -u; id -g; echo $HOME; touch /tmp/x && echo tmp-ok; touch /x 2>/dev/null || echo root-ro; which wget npx',
      ],
      { user: '1000:1000' },
    );
    expect(sh.exitCode, sh.stderr).toBe(0);
    expect(sh.stdout.trim().split('\n')).toEqual([
      '1000',
      '1000',
      '/home/app',
      'tmp-ok',
      'root-ro',
      '/bin/wget',
      '/usr/bin/npx',
    ]);
  });

  it('a container over its 64 MiB memory limit is OOM-killed', async () => {
    const r = await runContainer(
      host,
      image,
      [
        'node',
        '-e',
        'const a = []; for (let i = 0; i < 200; i++) a.push(Buffer.alloc(1 << 20, 1)); console.log("allocated", a.length)',
      ],
      {
        user: '1000:1000',
        hostConfig: { Memory: 64 * 1024 * 1024, MemorySwap: 64 * 1024 * 1024 },
      },
    );
    expect(r.state.OOMKilled).toBe(true);
    expect(r.exitCode).toBe(137);
    expect(r.stdout).not.toContain('allocated');
  });

  // The docker runtime's frames run on a network of their own (frameplane-frames): its bridge
  // (br-<id>) and rules outlive dockerd, so the teardown takes them away (host-state.ts) and
  // fails the run if anything of the host is still changed. The network is left for it here.
  it('a container on a network of its own runs, on a bridge of the host', async () => {
    const net = await dockerCall(host, 'POST', '/networks/create', {
      Name: `fp-infra-${process.pid}`,
      Driver: 'bridge',
      Labels: { [TEST_LABEL]: '1' },
    });
    expect(links()).toContain(`br-${String(net.Id).slice(0, 12)}`);
    const r = await runContainer(host, image, ['cat', '/sys/class/net/eth0/operstate'], {
      hostConfig: { NetworkMode: `fp-infra-${process.pid}` },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('up');
  });

  it('swarm is active and this node is a ready manager', async () => {
    const info = await dockerCall(host, 'GET', '/info');
    expect(info.Swarm.LocalNodeState).toBe('active');
    expect(info.Swarm.ControlAvailable).toBe(true);
    const nodes = await dockerCall<any[]>(host, 'GET', '/nodes');
    expect(nodes.some((n) => n.Status.State === 'ready' && n.ManagerStatus?.Leader)).toBe(true);
  });

  // PublishMode 'host': this kernel has no IPVS, so the routing mesh (PublishMode 'ingress', and
  // the VIP of EndpointSpec.Mode 'vip') never answers here; 'host' is a DNAT rule on the bridge.
  it('a swarm service publishing a port in host mode answers on 127.0.0.1', async () => {
    const port = 20_000 + (process.pid % 10_000);
    const { ID } = await dockerCall(host, 'POST', '/services/create', {
      Name: `fp-infra-${process.pid}`,
      Labels: { [TEST_LABEL]: '1' },
      TaskTemplate: {
        ContainerSpec: {
          Image: image,
          User: '1000:1000',
          Labels: { [TEST_LABEL]: '1' },
          Command: [
            'node',
            '-e',
            'require("http").createServer((q, s) => s.end("hello " + require("os").hostname())).listen(8080)',
          ],
        },
        Resources: { Limits: { MemoryBytes: 128 * 1024 * 1024 } },
      },
      Mode: { Replicated: { Replicas: 1 } },
      EndpointSpec: {
        Ports: [{ Protocol: 'tcp', TargetPort: 8080, PublishedPort: port, PublishMode: 'host' }],
      },
    });
    try {
      const t0 = Date.now();
      let body = '';
      while (Date.now() - t0 < 90_000) {
        body = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) })
          .then((r) => r.text())
          .catch(() => '');
        if (body) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      console.log(`[containers] service answered on 127.0.0.1 after ${Date.now() - t0} ms`);
      expect(body).toMatch(/^hello [0-9a-f]{12}$/);
    } finally {
      await dockerApi(host, 'DELETE', `/services/${ID}`);
    }
  });
});
