#!/bin/bash
# start.sh: starts the one-node test cluster inside the namespaces of in-netns.sh (which sets
# FRAMEPLANE_K8S_BIN, FRAMEPLANE_K8S_RUN, FRAMEPLANE_K8S_ID), then returns once the node is Ready
# and schedulable. All its state and logs are in $RUN; stop.sh undoes it all.
#
#   dockerd      its own, under $FRAMEPLANE_K8S_RUN (socket: $RUN/docker.sock), default runtime
#                runc-wrap (this VM lacks CAP_SYS_RESOURCE; see runc-wrap), --icc=false: pods on
#                the bridge cannot reach one another, the tenant isolation this cluster enforces
#   etcd         Debian's etcd-server, 127.0.0.1:23790
#   apiserver    https://127.0.0.1:16443, token test-admin-token (system:masters), RBAC
#   controller-manager, scheduler
#   kubelet      dockershim on that dockerd, no CNI: each pod gets an address of Docker's bridge
#                (its own network namespace); node IP: the veth address in-netns.sh made; its
#                cAdvisor reads the pods' containers from that dockerd too (`--docker`), for the
#                Summary API's pod stats
#
#   storage      no provisioner, as on many bare-metal clusters: the default class `local` binds
#                claims to local volumes made ahead ($RUN/volumes/pv-N, K8S_LOCAL_VOLUMES of
#                them, 8 unless set) once their pod is scheduled; the kubelet hands each to the
#                pod's fsGroup. A released one is not used again (Retain).
#
# Writes $RUN/kubeconfig (insecure-skip-tls-verify) and $RUN/env (KUBECONFIG=, DOCKER_HOST=).
# No kubectl needed (curl and jq); one that talks to 1.20 is Debian's kubernetes-client.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
k8s_require_netns
B=${FRAMEPLANE_K8S_BIN:?}
S=${FRAMEPLANE_K8S_RUN:?}
ID=${FRAMEPLANE_K8S_ID:?}
for c in dockerd containerd runc etcd jq curl openssl iptables mountpoint; do
  command -v "$c" >/dev/null 2>&1 || {
    echo "start.sh: '$c' is missing: apt-get install -y --no-install-recommends" \
      "docker.io etcd-server jq curl openssl iptables" >&2
    exit 1
  }
done
[ -e "$S/started" ] && { echo "start.sh: a cluster was already started in $S" >&2; exit 1; }
mkdir -p "$S/pki" "$S/docker"
touch "$S/started"
T0=$(date +%s%3N)
say() { echo "[k8s] $* ($(( $(date +%s%3N) - T0 )) ms)"; }
until_ok() { # SECONDS WHAT COMMAND...: polls COMMAND every 0.2 s
  local end=$((SECONDS + $1)) what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $end ]; then
      echo "start.sh: $what: not within $1 s; the logs end with:" >&2
      tail -n 12 "$S"/*.log >&2
      return 1
    fi
    sleep 0.2
  done
}
daemon() { # NAME COMMAND...: runs it in the background, log $S/NAME.log, pid $S/NAME.pid
  local name=$1; shift
  "$@" </dev/null >"$S/$name.log" 2>&1 8>&- &
  echo $! >"$S/$name.pid"
}

NODE_IP=${K8S_NODE_CIDR%/*}
CG=/$(k8s_cgroup_name "$ID")
export DOCKER_HOST=unix://$S/docker.sock
export KUBECONFIG=$S/kubeconfig
TOKEN=test-admin-token
API=https://127.0.0.1:16443
api() { curl -sfk --max-time 5 -H "Authorization: Bearer $TOKEN" "$API$1"; }
dockerapi() { curl -sf --max-time 60 --unix-socket "$S/docker.sock" "$@"; }

k8s_make_cgroups "$ID"

daemon dockerd dockerd --data-root "$S/docker/data" --exec-root "$S/docker/exec" \
  --pidfile "$S/docker/pid" -H "$DOCKER_HOST" --storage-driver overlay2 --log-level warn \
  --add-runtime "runc-wrap=$HERE/runc-wrap" --default-runtime runc-wrap \
  --bip "$K8S_POD_BRIDGE_CIDR" --icc=false --iptables=true \
  --cgroup-parent "$CG/docker" --oom-score-adjust 0
until_ok 60 "dockerd answers" dockerapi http://d/_ping
say "dockerd up"
# The pod sandbox's image: the static pause binary alone (no registry to pull it from).
IMPORT='http://d/images/create?fromSrc=-&repo=k8s.gcr.io/pause&tag=3.2'
IMPORT+='&changes=ENTRYPOINT%20%5B%22%2Fpause%22%5D' # ENTRYPOINT ["/pause"]
tar -C "$B" --owner=0 --group=0 -c pause | dockerapi -X POST -H 'Content-Type: application/x-tar' \
  --data-binary @- "$IMPORT" >/dev/null
dockerapi http://d/images/k8s.gcr.io/pause:3.2/json >/dev/null
say "pause image imported"

openssl genrsa -out "$S/pki/sa.key" 2048 2>/dev/null
openssl rsa -in "$S/pki/sa.key" -pubout -out "$S/pki/sa.pub" 2>/dev/null
echo "$TOKEN,admin,admin,system:masters" >"$S/pki/tokens.csv"
cat >"$KUBECONFIG" <<K
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "$API", insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: $TOKEN}
contexts:
- name: local
  context: {cluster: local, user: admin}
current-context: local
K
printf 'KUBECONFIG=%s\nDOCKER_HOST=%s\n' "$KUBECONFIG" "$DOCKER_HOST" >"$S/env"
# Pods get this as their DNS: their own loopback, so a lookup fails at once, sending nothing.
echo 'nameserver 127.0.0.1' >"$S/resolv.conf"

daemon etcd etcd --data-dir "$S/etcd" --listen-client-urls http://127.0.0.1:23790 \
  --advertise-client-urls http://127.0.0.1:23790 --listen-peer-urls http://127.0.0.1:23800 \
  --initial-advertise-peer-urls http://127.0.0.1:23800 \
  --initial-cluster default=http://127.0.0.1:23800
daemon apiserver "$B/kube-apiserver" --etcd-servers=http://127.0.0.1:23790 \
  --bind-address=127.0.0.1 --secure-port=16443 --insecure-port=0 --cert-dir="$S/pki/serving" \
  --token-auth-file="$S/pki/tokens.csv" --authorization-mode=RBAC \
  --service-account-issuer=https://kubernetes.default.svc \
  --service-account-key-file="$S/pki/sa.pub" --service-account-signing-key-file="$S/pki/sa.key" \
  --service-cluster-ip-range=10.96.0.0/16 --advertise-address=127.0.0.1 \
  --kubelet-preferred-address-types=Hostname
until_ok 90 "the API server is ready" api /readyz
say "apiserver ready"
daemon controller-manager "$B/kube-controller-manager" --kubeconfig="$KUBECONFIG" \
  --leader-elect=false --bind-address=127.0.0.1 --port=0 \
  --service-account-private-key-file="$S/pki/sa.key" --controllers='*,-nodeipam' \
  --flex-volume-plugin-dir="$S/controller-manager/volume-plugins"
daemon scheduler "$B/kube-scheduler" --kubeconfig="$KUBECONFIG" --leader-elect=false \
  --bind-address=127.0.0.1 --port=0
exec 8>"$K8S_SYSCTL_LOCK"
flock 8
daemon kubelet "$B/kubelet" --kubeconfig="$KUBECONFIG" --container-runtime=docker \
  --docker-endpoint="$DOCKER_HOST" --container-runtime-endpoint="unix://$S/dockershim.sock" \
  --docker="$DOCKER_HOST" \
  --pod-infra-container-image=k8s.gcr.io/pause:3.2 --cgroup-driver=cgroupfs --cgroup-root="$CG" \
  --fail-swap-on=false --root-dir="$S/kubelet" --cert-dir="$S/kubelet/pki" \
  --experimental-dockershim-root-directory="$S/dockershim" \
  --volume-plugin-dir="$S/kubelet/volume-plugins" --seccomp-profile-root="$S/kubelet/seccomp" \
  --address=127.0.0.1 --read-only-port=0 --healthz-bind-address=127.0.0.1 \
  --hostname-override=localhost --node-ip="$NODE_IP" --resolv-conf="$S/resolv.conf" \
  --anonymous-auth=true --authorization-mode=AlwaysAllow \
  --image-gc-high-threshold=100 --eviction-hard='memory.available<100Mi'
node_ready() {
  api /api/v1/nodes/localhost \
    | jq -e '.status.conditions[] | select(.type == "Ready" and .status == "True")'
}
node_schedulable() {
  api /api/v1/nodes/localhost | jq -e '(.spec.taints // []) | length == 0'
}
until_ok 120 "the node is Ready" node_ready
say "node Ready"
until_ok 60 "the node is schedulable" node_schedulable
say "node schedulable"
create() { # PATH: POSTs the JSON on stdin
  curl -sfk --max-time 5 -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    -X POST --data-binary @- "$API$1" >/dev/null
}
create /apis/storage.k8s.io/v1/storageclasses <<J
{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
 "metadata": {"name": "local",
   "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
 "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer",
 "reclaimPolicy": "Retain"}
J
for i in $(seq 1 "${K8S_LOCAL_VOLUMES:-8}"); do
  mkdir -p "$S/volumes/pv-$i"
  create /api/v1/persistentvolumes <<J
{"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "local-$i"},
 "spec": {"capacity": {"storage": "100Gi"}, "accessModes": ["ReadWriteOnce"],
   "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "local",
   "local": {"path": "$S/volumes/pv-$i"},
   "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions":
     [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["localhost"]}]}]}}}}
J
done
say "storage: class local, ${K8S_LOCAL_VOLUMES:-8} volumes"
# The kubelet sets its sysctls once, at start: put the host's values back now.
k8s_restore_sysctls "$S/host-sysctls" | sed 's/^/[k8s] /'
exec 8>&-
