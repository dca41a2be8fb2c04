// Going back to an earlier release of a frame's Deployment (issue 40). apps/v1 has no
// `rollbackTo` (extensions/v1beta1's, removed in 1.16): as `kubectl rollout undo` does, the
// earlier ReplicaSet's pod template is put back into the Deployment, which then rolls out to it
// like any release (maxUnavailable 0: what serves keeps serving until the old one is Ready).
// The Deployment keeps RELEASES_KEPT ReplicaSets (revisionHistoryLimit). Pure.
import type { V1Deployment, V1PodTemplateSpec, V1ReplicaSet } from '@kubernetes/client-node';
import { LABELS } from '../names.ts';

const REVISION = 'deployment.kubernetes.io/revision';
/** The ReplicaSet controller's label; the Deployment controller adds it to each template again. */
const TEMPLATE_HASH = 'pod-template-hash';

const revisionOf = (o: { metadata?: { annotations?: Record<string, string> } }) => {
  const n = Number(o.metadata?.annotations?.[REVISION]);
  return Number.isInteger(n) ? n : 0;
};

/**
 * The pod template to go back to: the newest kept ReplicaSet of release `deploymentId`, or,
 * without one, the newest whose revision is below the Deployment's (the release before it).
 * Undefined when the Deployment kept none.
 */
export function earlierTemplate(
  d: V1Deployment,
  replicaSets: V1ReplicaSet[],
  deploymentId?: string,
): V1PodTemplateSpec | undefined {
  const current = revisionOf(d);
  const uid = d.metadata?.uid;
  const candidates = replicaSets
    .filter((rs) => !uid || rs.metadata?.ownerReferences?.some((o) => o.uid === uid))
    .filter((rs) =>
      deploymentId
        ? rs.spec?.template?.metadata?.labels?.[LABELS.deployment] === deploymentId
        : revisionOf(rs) < current,
    )
    .sort((a, b) => revisionOf(b) - revisionOf(a));
  const template = candidates[0]?.spec?.template;
  if (!template) return undefined;
  const { [TEMPLATE_HASH]: _hash, ...labels } = template.metadata?.labels ?? {};
  return { ...template, metadata: { ...template.metadata, labels } };
}

/** The Deployment running `template`, its own labels saying which release that is. */
export function withTemplate(d: V1Deployment, template: V1PodTemplateSpec): V1Deployment {
  const from = template.metadata?.labels ?? {};
  const labels = { ...d.metadata?.labels };
  for (const key of [LABELS.deployment, LABELS.commit]) {
    const value = from[key];
    if (value === undefined) delete labels[key];
    else labels[key] = value;
  }
  if (!d.spec) throw new Error('kubernetes: a Deployment without its spec');
  return { ...d, metadata: { ...d.metadata, labels }, spec: { ...d.spec, template } };
}
