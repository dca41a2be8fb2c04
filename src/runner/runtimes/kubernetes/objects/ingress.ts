// For operators who route with their own Ingress controller (KUBERNETES_INGRESS_CLASS): a
// Service over the frame's pods and an Ingress of that class for the frame's hostname and its
// domains, both owned by the Deployment (they go with it). The agent's edge still routes to the
// pods' own addresses; the controller is a second way in, and its TLS is the controller's (a
// `tls` entry per frame names the Secret `fp-<frame>-tls`, which cert-manager, told by an
// annotation, fills). Pure: apply.ts sends what these return.
import type { V1Ingress, V1OwnerReference, V1Service } from '@kubernetes/client-node';
import { frameLabels, LABELS, labelValue, objectName } from '../names.ts';

export interface IngressOptions {
  /** The IngressClass the operator's controller serves. */
  ingressClass: string;
  /** Put on every Ingress (KUBERNETES_INGRESS_ANNOTATIONS): a cert-manager issuer, a limit. */
  annotations: Record<string, string>;
}

export interface FrameRouteInput {
  frameId: string;
  namespace: string;
  /** The frame's hostname and domains, lower-case. */
  hosts: readonly string[];
}

const PORT_NAME = 'http';

/** `k=v,k2=v2` as annotations; a pair without `=` or a key left empty is an operator's typo. */
export function parseAnnotations(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? '').split(',').map((p) => p.trim())) {
    if (!pair) continue;
    const at = pair.indexOf('=');
    const key = at < 0 ? '' : pair.slice(0, at).trim();
    if (!key) throw new Error(`KUBERNETES_INGRESS_ANNOTATIONS: "${pair}" is not key=value`);
    out[key] = pair.slice(at + 1).trim();
  }
  return out;
}

const metadataOf = (i: FrameRouteInput, owner: V1OwnerReference[]) => ({
  name: objectName(i.frameId),
  namespace: i.namespace,
  labels: frameLabels(i.frameId),
  ...(owner.length ? { ownerReferences: owner } : {}),
});

/** Port 80 of the Service is the app's port on each Ready pod of the frame. */
export function frameService(i: FrameRouteInput, owner: V1OwnerReference[] = []): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadataOf(i, owner),
    spec: {
      type: 'ClusterIP',
      selector: { [LABELS.frame]: labelValue('frame', i.frameId) },
      ports: [{ name: PORT_NAME, port: 80, targetPort: 'app', protocol: 'TCP' }],
    },
  };
}

/** A rule per host, all of its paths to the frame's Service. */
export function frameIngress(
  i: FrameRouteInput,
  o: IngressOptions,
  owner: V1OwnerReference[] = [],
): V1Ingress {
  const backend = { service: { name: objectName(i.frameId), port: { name: PORT_NAME } } };
  const meta = metadataOf(i, owner);
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: Object.keys(o.annotations).length ? { ...meta, annotations: o.annotations } : meta,
    spec: {
      ingressClassName: o.ingressClass,
      rules: i.hosts.map((host) => ({
        host,
        http: { paths: [{ path: '/', pathType: 'Prefix', backend }] },
      })),
      tls: [{ hosts: [...i.hosts], secretName: objectName(i.frameId, 'tls') }],
    },
  };
}
