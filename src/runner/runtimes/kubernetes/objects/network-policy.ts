// The NetworkPolicy that keeps a frame's pods apart (issue 40), where the cluster's network
// plugin enforces one (without a plugin, or for host-network pods, nothing does). In: the
// frame's port only, from anywhere (the agent's edge). Out: the public internet, as
// egress-policy.ts decides for builds (every range ipaddr.js names but public unicast is
// refused), never the cluster's own pod and service ranges (other tenants, the API server's
// service address), this node's or private networks, or link-local addresses (the cloud
// metadata service); and the cluster's DNS, so that public names resolve. Pure.
import type { V1NetworkPolicy, V1OwnerReference } from '@kubernetes/client-node';
import ipaddr from 'ipaddr.js';
import { frameLabels, LABELS, labelValue, objectName } from '../names.ts';

/** Every IPv4 range that is not public unicast (ipaddr.js's special ranges, to the letter). */
export const BLOCKED_V4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.31.196.0/24',
  '192.52.193.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '192.175.48.0/24',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
];

/**
 * IPv6 is let out to global unicast (2000::/3) only, less its special ranges: stricter than
 * ipaddr.js, which calls unallocated space outside 2000::/3 unicast too.
 */
export const GLOBAL_V6 = '2000::/3';
export const BLOCKED_V6 = [
  '2001::/23',
  '2001:db8::/32',
  '2002::/16',
  '2620:4f:8000::/48',
  '3fff::/20',
];

export interface PolicyInput {
  frameId: string;
  namespace: string;
  port: number;
  /** The cluster's pod and service ranges (its --cluster-cidr and --service-cluster-ip-range). */
  clusterCidrs: string[];
}

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

const inside = (inner: Cidr, outer: Cidr) =>
  inner[0].kind() === outer[0].kind() &&
  inner[1] >= outer[1] &&
  inner[0].match(outer as [(typeof inner)[0], number]);

/** The blocked ranges of one family within `block`, with the cluster's not already in them. */
function except(block: string, blocked: string[], cluster: string[]): string[] {
  const outer = ipaddr.parseCIDR(block);
  const known = blocked.map((c) => ipaddr.parseCIDR(c));
  const extra = cluster.filter((c) => {
    const range = ipaddr.parseCIDR(c);
    return inside(range, outer) && !known.some((k) => inside(range, k));
  });
  return [...blocked, ...extra];
}

export function framePolicy(i: PolicyInput, owner: V1OwnerReference[] = []): V1NetworkPolicy {
  // A range the operator mistyped must stop the agent, not leave the cluster open.
  for (const c of i.clusterCidrs) {
    if (!ipaddr.isValidCIDR(c)) throw new Error(`kubernetes: "${c}" is not a CIDR`);
  }
  const metadata = {
    name: objectName(i.frameId),
    namespace: i.namespace,
    labels: frameLabels(i.frameId),
  };
  const dnsPort = (protocol: string) => ({ port: 53, protocol });
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: owner.length ? { ...metadata, ownerReferences: owner } : metadata,
    spec: {
      podSelector: { matchLabels: { [LABELS.frame]: labelValue('frame', i.frameId) } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [{ ports: [{ port: i.port, protocol: 'TCP' }] }],
      egress: [
        {
          to: [
            {
              ipBlock: {
                cidr: '0.0.0.0/0',
                except: except('0.0.0.0/0', BLOCKED_V4, i.clusterCidrs),
              },
            },
            { ipBlock: { cidr: GLOBAL_V6, except: except(GLOBAL_V6, BLOCKED_V6, i.clusterCidrs) } },
          ],
        },
        {
          // Tenants label no pods: only the cluster's own DNS carries this label.
          to: [{ namespaceSelector: {}, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
          ports: [dnsPort('UDP'), dnsPort('TCP')],
        },
      ],
    },
  };
}
