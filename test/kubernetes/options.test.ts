// Issue 40 as operators set it up. FRAME_REGISTRY: the agent pushes each image to the registry
// (Debian's docker-registry on this run's loopback) and the pods name it there, free to run on
// any node. KUBERNETES_INGRESS_CLASS: a Service and an Ingress per frame for the operator's
// controller (this cluster runs none: the test checks what the controller would be given, and
// that the cluster's endpoints controller puts the frame's pod behind the Service).
import { afterAll, describe, expect, it } from 'vitest';
import { framePath, newFrame } from '../helpers/frames.ts';
import { objectName } from '../../src/runner/runtimes/kubernetes/names.ts';
import { startRegistry } from '../containers/registry.ts';
import { until } from '../runner/fixture.ts';
import { app, cluster, kubeWorld } from './kube-world.ts';

const { t: service, repo: fixture, context, world } = kubeWorld();
let registry: Awaited<ReturnType<typeof startRegistry>> | undefined;
afterAll(() => registry?.stop());

describe('the kubernetes runtime as operators set it up', () => {
  it('with a registry, pushes each image there; the pods name it there, on no node in particular', {
    timeout: 300_000,
  }, async () => {
    const t = service();
    registry = await startRegistry();
    fixture().pushFiles(app('v1'), 'v1', 'registry');
    // No KUBERNETES_NODE: the registry is where nodes find the images.
    const { ann, project, space, agentId, online, get } = await world({
      FRAME_REGISTRY: registry.address,
      KUBERNETES_NODE: '',
    });
    const frame = await newFrame(t, ann, project.id, space, {
      agent_id: agentId,
      git_repository_branch: 'registry',
    });
    const f = await online(framePath(frame), (x) => x.latest_deployment?.status === 'succeeded');
    const d = await cluster.apps.readNamespacedDeployment({
      namespace: objectName(project.id),
      name: objectName(frame.id),
    });
    const pod = d.spec?.template.spec;
    expect(pod?.containers[0]?.image).toMatch(
      new RegExp(`^${registry.address}/frameplane/[a-z0-9-]+:${f.serving.commit_sha}`),
    );
    expect(pod?.nodeSelector).toBeUndefined();
    expect(await registry.catalog()).toContain(
      `frameplane/${frame.id.toLowerCase().replace(/_/g, '-')}`,
    );
    expect(await get(frame)).toMatchObject({ status: 200 });
  });

  it('with an ingress class, gives the frame a Service and an Ingress that go with it', {
    timeout: 300_000,
  }, async () => {
    const t = service();
    fixture().pushFiles(app('i1'), 'i1', 'ingress');
    const { ann, project, space, agentId, online } = await world({
      KUBERNETES_INGRESS_CLASS: 'public',
      KUBERNETES_INGRESS_ANNOTATIONS: 'cert-manager.io/cluster-issuer=test-issuer',
    });
    const frame = await newFrame(t, ann, project.id, space, {
      agent_id: agentId,
      git_repository_branch: 'ingress',
    });
    const path = framePath(frame);
    await online(path);
    const namespace = objectName(project.id);
    const name = objectName(frame.id);
    const ing = await cluster.objects.read({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name, namespace },
    });
    expect(ing).toMatchObject({
      metadata: { annotations: { 'cert-manager.io/cluster-issuer': 'test-issuer' } },
      spec: { ingressClassName: 'public', rules: [{ host: frame.hostname }] },
    });
    expect(ing.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Deployment', name });
    const [pod] = (
      await cluster.core.listNamespacedPod({
        namespace,
        labelSelector: `frameplane.dev/frame=${frame.id}`,
      })
    ).items;
    const behind = await until(
      "the pod's address behind the Service",
      async () => {
        const e = await cluster.core.readNamespacedEndpoints({ name, namespace });
        const at = e.subsets?.[0];
        return at?.addresses?.length ? at : undefined;
      },
      60_000,
      context,
    );
    expect(behind.addresses?.map((a) => a.ip)).toEqual([pod?.status?.podIP]);
    expect(behind.ports?.[0]?.port).toBe(8080);

    expect((await t.del(path, { token: ann.token })).status).toBe(200);
    const gone = async (kind: 'Service' | 'Ingress') =>
      cluster.objects
        .read({
          apiVersion: kind === 'Service' ? 'v1' : 'networking.k8s.io/v1',
          kind,
          metadata: { name, namespace },
        })
        .then(
          () => false,
          () => true,
        );
    await until(
      'the Service and Ingress gone',
      async () => (await gone('Service')) && (await gone('Ingress')),
      120_000,
      context,
    );
  });
});
