// Image references as the Docker Engine reads them (the grammar of distribution/reference), and
// the namespace Frameplane tags its builds in: frameplane/<frame>, with or without a registry.

export const NAMESPACE = 'frameplane';

/** The label naming the frame an image was built for. */
export const FRAME_LABEL = 'frameplane.frame';

/** The repository of a frame's images (tags are commits): frameplane/<frame>. */
export const imageRepo = (frameId: string) =>
  `${NAMESPACE}/${frameId.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;

export interface Reference {
  /** The registry (host[:port]) when the name has one. */
  domain?: string;
  /** The repository inside it: `library/busybox` is written `busybox`. */
  path: string;
  tag?: string;
  digest?: string;
}

const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const DOMAIN_PART = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `${DOMAIN_PART}(?:\\.${DOMAIN_PART})*(?::[0-9]+)?`;
const REFERENCE = new RegExp(
  `^(?:(${DOMAIN})/)?(${COMPONENT}(?:/${COMPONENT})*)(?::([\\w][\\w.-]{0,127}))?` +
    '(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$',
);

/** An image id, which the Engine never pulls: sha256:<64 hex>, or the 64 hex alone. */
export const isImageId = (ref: string) => /^(?:sha256:)?[a-f0-9]{64}$/.test(ref);

/** The parts of a name, or undefined when the Engine would not read it as one. */
export function parseReference(ref: string): Reference | undefined {
  if (isImageId(ref) || ref.length > 255) return undefined;
  const m = REFERENCE.exec(ref);
  if (!m) return undefined;
  let [, domain, path = ''] = m;
  // The Engine's splitDockerDomain: a first component is a registry only if it looks like a host.
  if (domain && !/[.:]/.test(domain) && domain !== 'localhost' && domain === domain.toLowerCase()) {
    path = `${domain}/${path}`;
    domain = undefined;
  }
  if (domain === 'docker.io' || domain === 'index.docker.io') domain = undefined;
  if (!domain && path.startsWith('library/')) path = path.slice('library/'.length);
  return { domain, path, tag: m[3], digest: m[4] };
}

/** True for a repository of Frameplane's namespace, whichever registry holds it. */
export const inNamespace = (r: Reference) =>
  r.path === NAMESPACE || r.path.startsWith(`${NAMESPACE}/`);

/** True for this frame's own repository, whichever registry holds it. */
export const isFramesRepo = (r: Reference, frameId: string) => r.path === imageRepo(frameId);

/** How the Engine lists a name among an image's RepoTags or RepoDigests. */
export function familiarName(r: Reference): string {
  const name = r.domain ? `${r.domain}/${r.path}` : r.path;
  if (r.digest) return `${name}@${r.digest}`;
  return `${name}:${r.tag ?? 'latest'}`;
}
