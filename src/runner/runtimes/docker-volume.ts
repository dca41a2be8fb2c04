// A frame volume as a named volume of the Docker Engine, for the docker and swarm runtimes. The
// Engine makes a new volume's root directory root's, and the app runs unprivileged and cannot
// chown: so a new volume is handed to the app's user by a short-lived helper container, before
// any app mounts it. Swarm would make a missing volume itself, root's, which the app could then
// never write: it must be made here first.
import type Docker from 'dockerode';
import { volumeOwner } from '../builder/dockerfile.ts';
import type { Volume } from './runtime.ts';

/** The Engine's name of a frame volume. */
export const volumeName = (v: Pick<Volume, 'id'>) => `fp-${v.id.toLowerCase()}`;

/**
 * The named volume of `v`, made and handed to the app that runs as `runAs` if it is new (its
 * owner: dockerfile.ts volumeOwner); answers its name. An existing volume keeps its owner: its
 * files are the app's already.
 */
export async function ensureVolume(docker: Docker, baseImage: string, v: Volume, runAs: string) {
  const name = volumeName(v);
  try {
    await docker.getVolume(name).inspect();
    return name;
  } catch {
    /* new */
  }
  await docker.createVolume({ Name: name, Labels: { 'frameplane.volume': v.id } });
  const c = await docker.createContainer({
    Image: baseImage,
    User: '0:0',
    Cmd: ['chown', volumeOwner(runAs), '/v'],
    Labels: { 'frameplane.helper': 'volume' },
    HostConfig: {
      Mounts: [{ Type: 'volume', Source: name, Target: '/v' }],
      NetworkMode: 'none',
      AutoRemove: false,
    },
  });
  try {
    await c.start();
    await c.wait();
  } finally {
    await c.remove({ force: true }).catch(() => {});
  }
  return name;
}
