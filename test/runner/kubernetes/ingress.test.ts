// The Service and Ingress of a frame for an operator's Ingress controller
// (src/runner/runtimes/kubernetes/ingress.ts), and the annotations' setting.
import { describe, expect, it } from 'vitest';
import {
  frameIngress,
  frameService,
  parseAnnotations,
} from '../../../src/runner/runtimes/kubernetes/objects/ingress.ts';

const route = {
  frameId: 'frm_01ABC',
  namespace: 'fp-prj-1',
  hosts: ['web.example.test', 'a.b.test'],
};
const owner = [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'fp-frm-01abc', uid: 'u1' }];

describe('KUBERNETES_INGRESS_ANNOTATIONS', () => {
  it.each([
    [undefined, {}],
    ['', {}],
    [' , ', {}],
    ['a=b', { a: 'b' }],
    [
      'cert-manager.io/cluster-issuer = le , x/y=',
      { 'cert-manager.io/cluster-issuer': 'le', 'x/y': '' },
    ],
    ['k=v=w', { k: 'v=w' }],
  ])('%j is %j', (text, want) => {
    expect(parseAnnotations(text)).toEqual(want);
  });

  it.each(['novalue', '=v', 'a=b,oops'])('refuses %j, naming the pair', (text) => {
    expect(() => parseAnnotations(text)).toThrow(
      /KUBERNETES_INGRESS_ANNOTATIONS: ".*" is not key=value/,
    );
  });
});

describe("a frame's way in through an Ingress controller", () => {
  it("is a Service on the app's port of the frame's pods, owned by the Deployment", () => {
    expect(frameService(route, owner)).toMatchObject({
      metadata: {
        name: 'fp-frm-01abc',
        namespace: 'fp-prj-1',
        labels: { 'frameplane.dev/frame': 'frm_01ABC' },
        ownerReferences: owner,
      },
      spec: {
        type: 'ClusterIP',
        selector: { 'frameplane.dev/frame': 'frm_01ABC' },
        ports: [{ name: 'http', port: 80, targetPort: 'app' }],
      },
    });
  });

  it('is an Ingress of the class with a rule and TLS for each host', () => {
    const ing = frameIngress(route, { ingressClass: 'nginx', annotations: { a: 'b' } }, owner);
    expect(ing.metadata).toMatchObject({ annotations: { a: 'b' }, ownerReferences: owner });
    expect(ing.spec?.ingressClassName).toBe('nginx');
    expect(ing.spec?.rules?.map((r) => r.host)).toEqual(route.hosts);
    for (const r of ing.spec?.rules ?? [])
      expect(r.http?.paths).toEqual([
        {
          path: '/',
          pathType: 'Prefix',
          backend: { service: { name: 'fp-frm-01abc', port: { name: 'http' } } },
        },
      ]);
    expect(ing.spec?.tls).toEqual([{ hosts: route.hosts, secretName: 'fp-frm-01abc-tls' }]);
  });

  it('carries no annotations when none are set', () => {
    const ing = frameIngress(route, { ingressClass: 'nginx', annotations: {} });
    expect(ing.metadata?.annotations).toBeUndefined();
    expect(ing.metadata?.ownerReferences).toBeUndefined();
  });
});
