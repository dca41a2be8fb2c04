// The usage of a frame's pods from the kubelet's Summary (src/runner/runtimes/kubernetes/
// pod-usage.ts): which pod and container it reads, and what it leaves out.
import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import {
  type NodeSummary,
  type PodRef,
  podRefOf,
  usageOfSummary,
} from '../../../src/runner/runtimes/kubernetes/pod-usage.ts';

const ref: PodRef = { node: 'n1', namespace: 'fp-p', name: 'fp-f-abc', uid: 'u1' };
const LIMIT = 128 << 20;
const summary = (pod: Record<string, unknown> = {}): NodeSummary => ({
  pods: [
    {
      podRef: { namespace: 'fp-other', name: 'fp-f-abc', uid: 'u9' },
      containers: [{ name: 'app', cpu: { usageCoreNanoSeconds: 9e9 } }],
    },
    {
      podRef: { namespace: 'fp-p', name: 'fp-f-abc', uid: 'u1' },
      containers: [
        { name: 'sidecar', cpu: { usageCoreNanoSeconds: 7e9 } },
        {
          name: 'app',
          cpu: { usageCoreNanoSeconds: 2.5e9 },
          memory: { workingSetBytes: 40e6, usageBytes: 60e6 },
        },
      ],
      network: { rxBytes: 1000, txBytes: 2000 },
      ...pod,
    },
  ],
});

describe("a pod's usage from its node's Summary", () => {
  it("reads the app container of that pod, the working set, the pod's network", () => {
    expect(usageOfSummary(summary(), ref, LIMIT)).toEqual({
      cpuSeconds: 2.5,
      memoryBytes: 40e6,
      memoryLimitBytes: LIMIT,
      netRxBytes: 1000,
      netTxBytes: 2000,
    });
  });

  it.each([
    ['no pods', { pods: [] }],
    ['another pod of that name (its uid)', summary({ podRef: { ...ref, uid: 'u2' } })],
    ['no CPU reading yet', summary({ containers: [{ name: 'app', memory: {} }] })],
    [
      'a negative counter',
      summary({ containers: [{ name: 'app', cpu: { usageCoreNanoSeconds: -1 } }] }),
    ],
    [
      'no app container',
      summary({ containers: [{ name: 'x', cpu: { usageCoreNanoSeconds: 1 } }] }),
    ],
  ])('knows nothing with %s', (_what, s) => {
    expect(usageOfSummary(s as NodeSummary, ref, LIMIT)).toBeUndefined();
  });

  it('leaves out what the kubelet did not measure', () => {
    const s = summary({
      containers: [{ name: 'app', cpu: { usageCoreNanoSeconds: 1e9 }, memory: { usageBytes: 5 } }],
      network: undefined,
    });
    expect(usageOfSummary(s, ref, LIMIT)).toEqual({
      cpuSeconds: 1,
      memoryBytes: 5,
      memoryLimitBytes: LIMIT,
    });
  });
});

describe('the pods whose usage is read', () => {
  const pod = (extra: { phase?: string; nodeName?: string; deleting?: boolean } = {}): V1Pod => ({
    metadata: {
      name: 'fp-f-abc',
      namespace: 'fp-p',
      uid: 'u1',
      ...(extra.deleting ? { deletionTimestamp: new Date() } : {}),
    },
    spec: { containers: [], nodeName: 'nodeName' in extra ? extra.nodeName : 'n1' },
    status: { phase: extra.phase ?? 'Running' },
  });
  it.each([
    ['running on a node', pod(), ref],
    ['pending', pod({ phase: 'Pending' }), undefined],
    ['not yet on a node', pod({ nodeName: undefined }), undefined],
    ['being deleted', pod({ deleting: true }), undefined],
    ['ended', pod({ phase: 'Failed' }), undefined],
  ])('%s: %j', (_what, p, want) => {
    expect(podRefOf(p)).toEqual(want);
  });
});
