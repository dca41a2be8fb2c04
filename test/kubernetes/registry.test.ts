// Issue 40 with FRAME_REGISTRY: the agent pushes each image to the registry (Debian's
// docker-registry on this run's loopback) and the pods name it there, free to run on any node.
import { afterAll, describe, expect, it } from 'vitest';
import { framePath, newFrame } from '../helpers/frames.ts';
import { objectName } from '../../src/runner/runtimes/kubernetes/names.ts';
import { startRegistry } from '../containers/registry.ts';
import { app, cluster, kubeWorld } from './kube-world.ts';

const { t: service, repo: fixture, world } = kubeWorld();
let registry: Awaited<ReturnType<typeof startRegistry>> | undefined;
afterAll(() => registry?.stop());

describe('the kubernetes runtime with a registry', () => {
  it('pushes each image there, and the pods name it there, on no node in particular', {
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
});
