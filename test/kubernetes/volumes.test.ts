// Issue 40 on the real cluster: a frame's volume is a PersistentVolumeClaim (the test cluster's
// default class binds local volumes, cluster/start.sh) whose data outlives the frame's pods and
// the frame itself; an image that asks for a read-only root (LABEL frameplane.read-only-root)
// gets one, with /tmp and its volumes writable.
import { describe, expect, inject, it } from 'vitest';
import { framePath, newFrame } from '../helpers/frames.ts';
import { LABELS, objectName } from '../../src/runner/runtimes/kubernetes/names.ts';
import { readOnlyRootDockerfile, until } from '../runner/fixture.ts';
import { answers, cluster, kubeWorld, objectsOf } from './kube-world.ts';

const { t: service, repo: fixture, context, world } = kubeWorld();

/** Counts its starts in /data; says where it may write (true, or the error's code). */
const counter = {
  Dockerfile: readOnlyRootDockerfile(inject('frameBaseImage'), 'v.js'),
  'v.js': `const fs = require('fs');
let starts;
try { starts = Number(fs.readFileSync('/data/starts', 'utf8')) + 1; } catch { starts = 1; }
try { fs.writeFileSync('/data/starts', String(starts)); } catch (e) { starts = e.code; }
const can = (p) => { try { fs.writeFileSync(p, 'x'); return true; } catch (e) { return e.code; } };
const said = JSON.stringify({ starts, greeting: process.env.GREETING || null,
  root: can('/app/written'), tmp: can('/tmp/written') });
require('http').createServer((q, s) => s.end(said)).listen(Number(process.env.PORT));`,
};

describe('volumes on the kubernetes runtime', () => {
  it('keeps a volume across releases and the frame, under a read-only root', {
    timeout: 400_000,
  }, async () => {
    const t = service();
    fixture().pushFiles(counter, 'a counter on a volume', 'volume');
    const { ann, project, space, agentId, online, get } = await world();
    const frame = await newFrame(t, ann, project.id, space, {
      agent_id: agentId,
      git_repository_branch: 'volume',
    });
    const path = framePath(frame);
    const namespace = objectName(project.id);
    const vol = await t.post(`${path}/volumes`, {
      token: ann.token,
      body: { name: 'data', mount_path: '/data', size_gb: 1 },
    });
    expect(vol.status, vol.text).toBe(201);
    const said = async () => {
      const [body] = await answers(() => get(frame), 1);
      return body?.startsWith('200 ') ? JSON.parse(body.slice(4)) : undefined;
    };
    await online(path);
    const first = await until(
      'the app counting on its volume',
      async () => {
        const s = await said();
        return typeof s?.starts === 'number' ? s : undefined;
      },
      120_000,
      context,
    );
    expect(first).toMatchObject({ root: 'EROFS', tmp: true });
    const claims = await cluster.core.listNamespacedPersistentVolumeClaim({
      namespace,
      labelSelector: `${LABELS.frame}=${frame.id}`,
    });
    expect(claims.items.map((c) => c.status?.phase)).toEqual(['Bound']);
    const pod = (
      await cluster.apps.readNamespacedDeployment({ namespace, name: objectName(frame.id) })
    ).spec?.template.spec?.containers[0];
    expect(pod?.securityContext?.readOnlyRootFilesystem).toBe(true);

    // A config release: a new pod, the same data.
    const env = await t.put(`${path}/env?deploy=true`, {
      token: ann.token,
      body: { vars: { GREETING: 'again' } },
    });
    expect(env.status, env.text).toBe(200);
    const again = await until(
      'the new pod counting on',
      async () => {
        const s = await said();
        return s?.greeting === 'again' ? s : undefined;
      },
      120_000,
      context,
    );
    expect(again.starts).toBe(first.starts + 1);

    // The frame goes; its claim, and the data on it, stay (as a docker volume does).
    expect((await t.del(path, { token: ann.token })).status).toBe(200);
    await until(
      'the pods gone',
      async () => (await objectsOf(namespace, frame.id)).pods.length === 0,
      120_000,
      context,
    );
    const kept = await cluster.core.listNamespacedPersistentVolumeClaim({
      namespace,
      labelSelector: `${LABELS.frame}=${frame.id}`,
    });
    expect(kept.items.map((c) => c.metadata?.name)).toEqual(
      claims.items.map((c) => c.metadata?.name),
    );
  });
});
