// A bridge network whose containers cannot reach each other (inter-container traffic off), made
// once per Engine and name: the docker runtime's frames run on one, and image builds on another,
// so that the RUN steps of two tenants' builds never share Docker's default bridge.
import type Docker from 'dockerode';

const made = new WeakMap<Docker, Map<string, Promise<void>>>();

export function ensureBridgeNetwork(docker: Docker, name: string): Promise<void> {
  const byName = made.get(docker) ?? new Map<string, Promise<void>>();
  made.set(docker, byName);
  let ready = byName.get(name);
  if (!ready) {
    ready = create(docker, name).catch((err) => {
      byName.delete(name); // asked again next time
      throw err;
    });
    byName.set(name, ready);
  }
  return ready;
}

async function create(docker: Docker, name: string) {
  const found = await docker.listNetworks({ filters: JSON.stringify({ name: [name] }) });
  const same = found.find((n) => n.Name === name);
  if (same) {
    // Made by someone else: used only if it keeps containers apart as ours would.
    if (
      same.Driver !== 'bridge' ||
      same.Options?.['com.docker.network.bridge.enable_icc'] !== 'false'
    )
      throw new Error(`network ${name} lets its containers reach each other: remove it`);
    return;
  }
  await docker
    .createNetwork({
      Name: name,
      Driver: 'bridge',
      CheckDuplicate: true,
      Labels: { 'frameplane.network': '1' },
      Options: { 'com.docker.network.bridge.enable_icc': 'false' },
    })
    .catch((err: { statusCode?: number }) => {
      if (err.statusCode !== 409) throw err;
    });
}
