// The swarm service of a frame (src/runner/runtimes/swarm/service.ts): the confinement of its
// tasks, and the read-only root an image asks for (issue 40), with a /tmp of its own unless a
// volume is mounted there.
import { describe, expect, it } from 'vitest';
import { serviceSpec, type ServiceInput } from '../../src/runner/runtimes/swarm/service.ts';

const input = (extra: Partial<ServiceInput> = {}): ServiceInput => ({
  frameId: 'frm_1',
  release: { deploymentId: 'dep_1', artifact: 'frameplane/frm_1:abc', commitSha: 'abc' },
  env: {},
  replicas: 1,
  port: 8080,
  volumes: [],
  memoryMb: 64,
  cpus: 1,
  user: '1000:1000',
  ...extra,
});

const container = (i: ServiceInput) => serviceSpec(i).TaskTemplate.ContainerSpec;
const data = { id: 'vol_1', name: 'data', mount_path: '/data', size_gb: 1 };

describe('a frame as a swarm service', () => {
  it('drops every capability and runs as the given user, with its root writable by default', () => {
    const c = container(input({ volumes: [data] }));
    expect(c).toMatchObject({ CapabilityDrop: ['ALL'], User: '1000:1000', ReadOnly: false });
    expect(c.Mounts).toEqual([{ Type: 'volume', Source: 'fp-vol_1', Target: '/data' }]);
  });

  it.each([
    ['no volume', [], ['/tmp']],
    ['a volume on /data', [data], ['/data', '/tmp']],
    ['a volume on /tmp', [{ ...data, mount_path: '/tmp' }], ['/tmp']],
  ])('with a read-only root and %s, mounts %j', (_what, volumes, targets) => {
    const c = container(input({ readOnlyRoot: true, volumes }));
    expect(c.ReadOnly).toBe(true);
    expect(c.Mounts.map((m) => m.Target)).toEqual(targets);
    const tmp = c.Mounts.find((m) => m.Target === '/tmp');
    expect(tmp?.Type).toBe(volumes.some((v) => v.mount_path === '/tmp') ? 'volume' : 'tmpfs');
  });

  it('sizes the own /tmp by the memory limit, writable by all', () => {
    const tmp = container(input({ readOnlyRoot: true })).Mounts[0];
    expect(tmp).toMatchObject({ TmpfsOptions: { SizeBytes: 64 << 20, Mode: 0o1777 } });
  });
});
