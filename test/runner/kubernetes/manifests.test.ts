// A frame as Kubernetes objects (src/runner/runtimes/kubernetes/objects/manifests.ts, pod.ts, names.ts,
// rollback.ts): tables of what each input gives, and properties over any frame: no object
// grants privilege, every one carries the frame's labels, names are what Kubernetes takes.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { V1Deployment, V1ReplicaSet } from '@kubernetes/client-node';
import {
  deploymentName,
  envSecret,
  frameDeployment,
  ownedBy,
  projectNamespace,
  volumeClaims,
  type FrameObjectsInput,
} from '../../../src/runner/runtimes/kubernetes/objects/manifests.ts';
import { envSecretName, podUser } from '../../../src/runner/runtimes/kubernetes/objects/pod.ts';
import {
  LABELS,
  labelValue,
  namespaceOf,
  objectName,
} from '../../../src/runner/runtimes/kubernetes/names.ts';
import { framePolicy } from '../../../src/runner/runtimes/kubernetes/objects/network-policy.ts';
import {
  earlierTemplate,
  withTemplate,
} from '../../../src/runner/runtimes/kubernetes/objects/rollback.ts';

const FRAME = 'frm_01JD5ZQ8X3T9V7K2M4N6P8R0S1';
const input = (extra: Partial<FrameObjectsInput> = {}): FrameObjectsInput => ({
  frameId: FRAME,
  namespace: 'fp-prj-1',
  release: {
    deploymentId: 'dep_01JD5ZQ8X3T9V7K2M4N6P8R0S2',
    artifact: 'fp-frm-01jd5zq8x3t9v7k2m4n6p8r0s1:0123456789abcdef0123456789abcdef01234567',
    commitSha: '0123456789abcdef0123456789abcdef01234567',
  },
  env: { GREETING: 'hello', EMPTY: '' },
  replicas: 2,
  port: 3000,
  healthCheckPath: '/health',
  volumes: [],
  memoryMb: 512,
  cpus: 1,
  ...extra,
});
const podSpec = (d: V1Deployment) => d.spec?.template.spec;
const app = (d: V1Deployment) => podSpec(d)?.containers[0];
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

describe('names', () => {
  it.each([
    ['a frame id', FRAME, '', 'fp-frm-01jd5zq8x3t9v7k2m4n6p8r0s1'],
    ['a suffix', 'frm_A', 'env-1a2b', 'fp-frm-a-env-1a2b'],
    ['runs of other characters', '__Weird..ID__', '', 'fp-weird-id'],
    ['nothing usable', '___', '', 'fp-x'],
  ])('names %s', (_what, id, suffix, want) => {
    expect(objectName(id, suffix)).toBe(want);
  });

  it('keeps long ids apart within 63 characters', () => {
    const a = objectName(`frm_${'A'.repeat(80)}`, 'env-0123456789');
    const b = objectName(`frm_${'A'.repeat(79)}B`, 'env-0123456789');
    expect(a).not.toBe(b);
    for (const n of [a, b]) {
      expect(n.length).toBeLessThanOrEqual(63);
      expect(n).toMatch(DNS_LABEL);
      expect(n.endsWith('-env-0123456789')).toBe(true);
    }
  });

  it.each([
    [{ projectId: 'prj_01JD5ZQ8X3' }, 'fp-prj-01jd5zq8x3'],
    [{ projectId: 'prj_1', namespace: 'frames' }, 'frames'],
    [{ namespace: 'frames' }, 'frames'],
  ])('puts %o in namespace %s', (o, want) => {
    expect(namespaceOf(o)).toBe(want);
  });

  it('needs a project or a namespace', () => {
    expect(() => namespaceOf({})).toThrow(/project id or a namespace/);
  });

  it.each([['has space'], ['-lead'], ['x'.repeat(64)], ['trail_']])(
    'refuses %j as a label value',
    (v) => {
      expect(() => labelValue('frame', v)).toThrow(/cannot be a label value/);
    },
  );
});

describe('the pods', () => {
  it.each([
    ['no USER (root)', undefined, { uid: 1000, gid: 1000 }],
    ['root by name', 'root', { uid: 1000, gid: 1000 }],
    ['uid 0 in any spelling', '+00:5', { uid: 1000, gid: 1000 }],
    ['a numbered user and group', '1001:1002', { uid: 1001, gid: 1002 }],
    ['a numbered user alone (the image says the group)', '1001', { uid: 1001 }],
    ['a named group', '1001:staff', { uid: 1001 }],
    ['the root group, as images made for any uid use it', '1001:0', { uid: 1001, gid: 0 }],
    ['ids Kubernetes cannot take', '4294967295:4294967295', { uid: 1000, gid: 1000 }],
    ['a group Kubernetes cannot take', '1001:4294967295', { uid: 1001 }],
    ['a named user (unknown here)', 'node', { uid: 1000, gid: 1000 }],
  ])('runs an image with %s as %o', (_what, user, want) => {
    expect(podUser(user)).toEqual(want);
  });

  it('gives a Deployment that rolls out one Ready pod at a time, confined', () => {
    const d = frameDeployment(input({ imageUser: '1001' }));
    expect(d.metadata?.name).toBe(deploymentName(FRAME));
    expect(d.spec?.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 0, maxSurge: 1 },
    });
    expect(d.spec?.selector.matchLabels).toEqual({ [LABELS.frame]: FRAME });
    expect(d.spec?.template.metadata?.labels).toMatchObject({
      [LABELS.frame]: FRAME,
      [LABELS.deployment]: 'dep_01JD5ZQ8X3T9V7K2M4N6P8R0S2',
      [LABELS.commit]: '0123456789abcdef0123456789abcdef01234567',
    });
    const spec = podSpec(d);
    expect(spec).toMatchObject({
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      hostNetwork: false,
      dnsPolicy: 'ClusterFirst',
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 1001,
        fsGroup: 1001,
        seccompProfile: { type: 'RuntimeDefault' },
      },
    });
    expect(spec?.securityContext?.runAsGroup).toBeUndefined();
    expect(app(d)).toMatchObject({
      image: input().release.artifact,
      ports: [{ containerPort: 3000 }],
      envFrom: [{ secretRef: { name: envSecretName(FRAME, input().env) } }],
      resources: {
        limits: { memory: '512Mi', cpu: '1000m' },
        requests: { memory: '51Mi', cpu: '100m' },
      },
      securityContext: {
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        readOnlyRootFilesystem: false,
      },
      readinessProbe: { httpGet: { path: '/health', port: 3000 } },
    });
    expect(app(d)?.env).toEqual([
      { name: 'PORT', value: '3000' },
      { name: 'FRAMEPLANE_FRAME_ID', value: FRAME },
      { name: 'FRAMEPLANE_DEPLOYMENT_ID', value: 'dep_01JD5ZQ8X3T9V7K2M4N6P8R0S2' },
    ]);
  });

  it.each([
    ['a health path', { healthCheckPath: '/up' }, { httpGet: { path: '/up', port: 3000 } }],
    ['none', { healthCheckPath: '' }, { tcpSocket: { port: 3000 } }],
    [
      'the host network',
      { hostNetwork: true, port: 41000 },
      { httpGet: { path: '/health', port: 41000, host: '127.0.0.1' } },
    ],
  ])('checks readiness with %s', (_what, extra, want) => {
    const probe = app(frameDeployment(input(extra)))?.readinessProbe;
    expect(probe).toMatchObject(want);
    expect(probe?.httpGet && probe.tcpSocket).toBeFalsy();
  });

  it('on the host network, resolves names as the node does', () => {
    expect(podSpec(frameDeployment(input({ hostNetwork: true })))).toMatchObject({
      hostNetwork: true,
      dnsPolicy: 'Default',
    });
  });

  it.each([
    ['no volume', [], ['tmp']],
    [
      'a volume on /data',
      [{ id: 'vol_1', name: 'd', mount_path: '/data', size_gb: 1 }],
      ['fp-vol-1', 'tmp'],
    ],
    [
      'a volume on /tmp',
      [{ id: 'vol_2', name: 't', mount_path: '/tmp', size_gb: 1 }],
      ['fp-vol-2'],
    ],
  ])('with a read-only root and %s, mounts %j', (_what, volumes, want) => {
    const d = frameDeployment(input({ readOnlyRootFilesystem: true, volumes }));
    expect(app(d)?.securityContext?.readOnlyRootFilesystem).toBe(true);
    expect(app(d)?.volumeMounts?.map((m) => m.name)).toEqual(want);
    expect(podSpec(d)?.volumes?.map((v) => v.name)).toEqual(want);
  });

  it('keeps pods on the node that has the image, when told', () => {
    expect(podSpec(frameDeployment(input({ node: 'node-1' })))?.nodeSelector).toEqual({
      'kubernetes.io/hostname': 'node-1',
    });
    expect(podSpec(frameDeployment(input()))?.nodeSelector).toBeUndefined();
  });
});

describe('the objects beside the Deployment', () => {
  const owner = ownedBy({ metadata: { name: 'fp-frm-1', uid: 'u-1' } });

  it('keeps the env in an immutable Secret named by its content, owned by the Deployment', () => {
    const s = envSecret(input(), owner);
    expect(s).toMatchObject({
      immutable: true,
      metadata: { name: envSecretName(FRAME, input().env), ownerReferences: owner },
      data: { GREETING: 'aGVsbG8=', EMPTY: '' },
    });
    expect(envSecret(input()).metadata?.ownerReferences).toBeUndefined();
    const same = envSecretName(FRAME, { EMPTY: '', GREETING: 'hello' });
    expect(same).toBe(s.metadata?.name); // the order of the keys does not matter
    expect(envSecretName(FRAME, { GREETING: 'hi', EMPTY: '' })).not.toBe(same);
  });

  it('claims each volume, with no owner: volumes outlive the Deployment', () => {
    const volumes = [{ id: 'vol_01ABC', name: 'data', mount_path: '/data', size_gb: 3 }];
    const [claim] = volumeClaims(input({ volumes, storageClass: 'local' }));
    expect(claim).toMatchObject({
      metadata: { name: 'fp-vol-01abc', labels: { [LABELS.volume]: 'vol_01ABC' } },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '3Gi' } },
        storageClassName: 'local',
      },
    });
    expect(claim?.metadata?.ownerReferences).toBeUndefined();
    expect(volumeClaims(input({ volumes }))[0]?.spec?.storageClassName).toBeUndefined();
  });

  it.each([
    [false, { 'pod-security.kubernetes.io/enforce': 'restricted' }],
    [true, {}],
  ])('labels the namespace (host network %s)', (hostNetwork, security) => {
    const labels = projectNamespace('fp-prj-1', 'prj_1', hostNetwork).metadata?.labels;
    expect(labels).toEqual({
      'app.kubernetes.io/managed-by': 'frameplane',
      [LABELS.project]: 'prj_1',
      ...security,
    });
    expect(projectNamespace('frames').metadata?.labels?.[LABELS.project]).toBeUndefined();
  });

  it('refers to an owner only once the server made it', () => {
    expect(owner).toEqual([
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'fp-frm-1', uid: 'u-1' },
    ]);
    expect(() => ownedBy(frameDeployment(input()))).toThrow(/the server made/);
  });
});

describe('rollback', () => {
  const current = frameDeployment(input());
  const deployed = {
    ...current,
    metadata: {
      ...current.metadata,
      uid: 'd-1',
      annotations: { 'deployment.kubernetes.io/revision': '3' },
    },
  };
  const rs = (revision: number, deploymentId: string, owner = 'd-1'): V1ReplicaSet => {
    const t = frameDeployment(
      input({ release: { ...input().release, deploymentId, commitSha: `c${revision}` } }),
    );
    const labels = { ...t.spec?.template.metadata?.labels, 'pod-template-hash': `h${revision}` };
    return {
      metadata: {
        name: `fp-frm-${revision}`,
        annotations: { 'deployment.kubernetes.io/revision': String(revision) },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'x', uid: owner }],
      },
      spec: {
        selector: {},
        template: { ...t.spec?.template, metadata: { labels } },
      },
    };
  };
  const sets = [rs(1, 'dep_a'), rs(2, 'dep_b'), rs(3, 'dep_c'), rs(9, 'dep_z', 'other')];

  it.each([
    ['the release before', undefined, 'dep_b', 'c2'],
    ['a named release', 'dep_a', 'dep_a', 'c1'],
    ['a release not kept', 'dep_gone', undefined, undefined],
    ['a release of another Deployment', 'dep_z', undefined, undefined],
  ])('gives back the template of %s', (_what, id, want, commit) => {
    const t = earlierTemplate(deployed, sets, id);
    expect(t?.metadata?.labels?.[LABELS.deployment]).toBe(want);
    if (!t) return;
    expect(t.metadata?.labels?.['pod-template-hash']).toBeUndefined();
    const back = withTemplate(deployed, t);
    expect(back.spec?.template).toBe(t);
    expect(back.metadata?.labels).toMatchObject({
      [LABELS.deployment]: want,
      [LABELS.commit]: commit,
    });
    expect(back.spec?.replicas).toBe(deployed.spec?.replicas);
  });

  it('has nothing to go back to before a first revision, or without a spec', () => {
    expect(earlierTemplate(current, [], undefined)).toBeUndefined();
    expect(() => withTemplate({ metadata: {} }, { metadata: {} })).toThrow(/without its spec/);
    const bare = withTemplate(deployed, { metadata: {} });
    expect(bare.metadata?.labels?.[LABELS.deployment]).toBeUndefined();
  });
});

// Any frame the service could send: its ids, env, volumes, sizes, the image's user.
const ulid = fc.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/);
const anyInput = fc.record({
  frameId: ulid.map((u) => `frm_${u}`),
  deploymentId: ulid.map((u) => `dep_${u}`),
  commitSha: fc.stringMatching(/^[0-9a-f]{40}$/),
  env: fc.dictionary(fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,20}$/), fc.string()),
  replicas: fc.integer({ min: 0, max: 100 }),
  port: fc.integer({ min: 1, max: 65535 }),
  healthCheckPath: fc.oneof(fc.constant(''), fc.webPath()),
  volumes: fc.array(
    fc.record({
      id: ulid.map((u) => `vol_${u}`),
      name: fc.constant('v'),
      mount_path: fc.stringMatching(/^(\/[a-z]{1,8}){1,3}$/),
      size_gb: fc.integer({ min: 1, max: 16384 }),
    }),
    { maxLength: 4 },
  ),
  memoryMb: fc.integer({ min: 1, max: 65536 }),
  cpus: fc.double({ min: 0.001, max: 64, noNaN: true }),
  imageUser: fc.option(
    fc.oneof(
      fc.constantFrom('root', '0', '00', '+0', '-0', '0:0', ':0', 'root:root', 'node', '1000:1000'),
      fc.string(),
      fc
        .tuple(fc.oneof(fc.nat(), fc.nat({ max: 2 ** 33 })), fc.option(fc.nat()))
        .map(([u, g]) => (g === null ? `${u}` : `${u}:${g}`)),
    ),
    { nil: undefined },
  ),
  hostNetwork: fc.boolean(),
  readOnlyRootFilesystem: fc.boolean(),
});

describe('whatever the frame', () => {
  it('no pod runs as root, gains privilege, keeps a capability or reaches the host', () => {
    fc.assert(
      fc.property(anyInput, ({ deploymentId, commitSha, ...i }) => {
        const d = frameDeployment(
          input({ ...i, release: { deploymentId, commitSha, artifact: 'img:1' } }),
        );
        const spec = podSpec(d);
        const pod = spec?.securityContext;
        expect(pod?.runAsNonRoot).toBe(true);
        expect(pod?.runAsUser).toBeGreaterThan(0);
        expect(pod?.runAsUser).toBeLessThan(2 ** 31);
        expect(pod?.runAsGroup ?? 0).toBeGreaterThanOrEqual(0);
        expect(pod?.seccompProfile?.type).toBe('RuntimeDefault');
        expect(spec?.automountServiceAccountToken).toBe(false);
        expect(spec?.hostPID).toBe(false);
        expect(spec?.hostIPC).toBe(false);
        expect(spec?.volumes?.every((v) => !v.hostPath)).toBe(true);
        expect(spec?.containers).toHaveLength(1);
        const c = spec?.containers[0]?.securityContext;
        expect(c?.privileged).toBe(false);
        expect(c?.allowPrivilegeEscalation).toBe(false);
        expect(c?.capabilities).toEqual({ drop: ['ALL'] });
        expect(c?.runAsUser).toBe(pod?.runAsUser);
        const limits = spec?.containers[0]?.resources?.limits;
        expect(limits?.memory).toBe(`${i.memoryMb}Mi`);
        expect(limits?.cpu).toMatch(/^[1-9][0-9]*m$/);
      }),
    );
  });

  it("every object carries the frame's labels, and names Kubernetes takes", () => {
    fc.assert(
      fc.property(anyInput, ({ deploymentId, commitSha, ...i }) => {
        const release = { deploymentId, commitSha, artifact: 'img:1' };
        const all = input({ ...i, release });
        const owner = ownedBy({ metadata: { name: 'x', uid: 'u' } });
        const d = frameDeployment(all);
        const objects = [
          d,
          envSecret(all, owner),
          ...volumeClaims(all),
          framePolicy(
            { frameId: i.frameId, namespace: all.namespace, port: i.port, clusterCidrs: [] },
            owner,
          ),
        ];
        for (const o of objects) {
          expect(o.metadata?.labels?.[LABELS.frame]).toBe(i.frameId);
          expect(o.metadata?.labels?.['app.kubernetes.io/managed-by']).toBe('frameplane');
          expect(o.metadata?.name).toMatch(DNS_LABEL);
          expect((o.metadata?.name ?? '').length).toBeLessThanOrEqual(63);
        }
        const template = d.spec?.template.metadata?.labels ?? {};
        expect(template).toMatchObject({
          [LABELS.frame]: i.frameId,
          [LABELS.deployment]: deploymentId,
          [LABELS.commit]: commitSha,
        });
        // The Deployment selects its own pods, and only by what no release changes.
        expect(template).toMatchObject(d.spec?.selector.matchLabels ?? { none: 'x' });
        expect(Object.keys(d.spec?.selector.matchLabels ?? {})).toEqual([LABELS.frame]);
        // The pods find their Secret and their claims.
        const secretRef = d.spec?.template.spec?.containers[0]?.envFrom?.[0]?.secretRef?.name;
        expect(secretRef).toBe(envSecret(all).metadata?.name);
        const claims = volumeClaims(all).map((c) => c.metadata?.name);
        const mounted = d.spec?.template.spec?.volumes?.flatMap(
          (v) => v.persistentVolumeClaim?.claimName ?? [],
        );
        expect(mounted).toEqual(claims);
      }),
    );
  });
});
