#!/bin/bash
# in-netns.sh CMD...: runs CMD (the Kubernetes tests) in network, mount and PID namespaces of its
# own, as root, with the cluster's binaries ready (binaries.sh, run first, outside: a build needs
# Debian's mirror; their directory is passed in as FRAMEPLANE_K8S_BIN). The test cluster
# (start.sh) lives in there with everything the tests start: PostgreSQL, the service, the agent,
# dockerd, etcd, the API server, the kubelet and the pods.
#
# Why: pods get their own addresses on Docker's bridge (so N replicas on one node can all listen
# on one port), and the tests talk to those addresses. Inside a network namespace made here, with
# only `lo` and the node's veth, that traffic cannot leave the machine, nor touch the host's
# bridges and iptables. In the mount namespace, /run, /etc, /opt, /var/lib and /var/log are
# overlays whose changes go to the run's work dir: what dockerd, containerd and the kubelet write
# there at fixed paths (/run/docker, /etc/docker/key.json, /opt/containerd,
# /var/lib/kubelet/device-plugins, /var/log/pods) never reaches the host, and their mounts stay
# in the namespace. The PID namespace means nothing can outlive the run: when CMD is done,
# stop.sh stops the cluster, and whatever is left is killed with the namespace's first process.
# What remains outside the namespaces (cgroups, the global sysctls the kubelet sets, the work dir
# in /tmp) is cleaned here afterwards (lib.sh), also for an earlier run that was killed.
#
#   sudo test/kubernetes/cluster/in-netns.sh npx vitest run --config vitest.kubernetes.config.ts
#   sudo test/kubernetes/cluster/in-netns.sh bash   # then start.sh, kubectl, stop.sh by hand
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

if [ "${FRAMEPLANE_K8S_NETNS:-}" != inside ]; then
  if [ $# -eq 0 ]; then echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; fi
  if [ "$(id -u)" != 0 ]; then
    echo "The Kubernetes tests need root (they start dockerd and a kubelet in namespaces of" \
      "their own); run them as root, e.g. sudo npm run test:kubernetes." >&2
    exit 1
  fi
  for c in unshare ip mountpoint; do
    if ! command -v "$c" >/dev/null 2>&1; then
      echo "The Kubernetes tests need '$c': apt-get install -y util-linux iproute2" >&2
      exit 1
    fi
  done
  # Runs killed before their own clean-up: their first process is gone, their leftovers not.
  for id in $(for d in /tmp/frameplane-k8s-* /sys/fs/cgroup/*/frameplane-k8s-*; do
    echo "${d##*frameplane-k8s-}"
  done | sort -u); do
    case $id in '' | *[!0-9]*) continue ;; esac
    grep -qa in-netns.sh "/proc/$id/cmdline" 2>/dev/null && continue
    echo "in-netns: cleaning up after run $id, which did not" >&2
    k8s_restore_sysctls "$(k8s_run_dir "$id")/host-sysctls"
    k8s_remove_cgroups "$id"
    rm -rf "$(k8s_run_dir "$id")"
  done
  t0=$(date +%s%3N)
  FRAMEPLANE_K8S_BIN=$("$HERE/binaries.sh") || exit 1
  echo "[k8s] binaries ready in $(( $(date +%s%3N) - t0 )) ms: $FRAMEPLANE_K8S_BIN" >&2
  id=$$
  run=$(k8s_run_dir "$id")
  mkdir -p "$run"
  (flock 8 && k8s_save_sysctls "$run/host-sysctls") 8>"$K8S_SYSCTL_LOCK"
  # --kill-child: if this script is killed, the namespaces' first process (and so all of them)
  # gets SIGKILL rather than living on unseen.
  unshare --net --mount --propagation private --pid --fork --mount-proc --kill-child \
    env FRAMEPLANE_K8S_NETNS=inside FRAMEPLANE_K8S_ID="$id" FRAMEPLANE_K8S_RUN="$run" \
    FRAMEPLANE_K8S_BIN="$FRAMEPLANE_K8S_BIN" bash "$0" "$@"
  rc=$?
  # After a clean stop there is nothing left to do; after a crash, the same as for a stale run.
  left=0
  k8s_restore_sysctls "$run/host-sysctls" >&2
  k8s_remove_cgroups "$id" || left=1
  if [ -n "$(find "$run" -name '*.log' -print -quit 2>/dev/null)" ] && [ "$rc" != 0 ]; then
    keep=/tmp/frameplane-k8s-logs-$id
    mkdir -p "$keep" && find "$run" -maxdepth 1 -name '*.log' -exec mv {} "$keep/" \;
    echo "in-netns: the cluster's logs are kept in $keep" >&2
  fi
  rm -rf "$run" || left=1
  [ "$rc" = 0 ] && [ "$left" = 1 ] && rc=1
  exit "$rc"
fi

# Inside: PID 1 of the new namespaces. lo, and the node's address on one end of a veth pair.
set -e
ip link set lo up
# New interfaces (the veths, docker0) get no IPv6 link-local addresses: nothing to chatter.
echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
ip link add "$K8S_NODE_IF" type veth peer name "$K8S_NODE_PEER"
ip addr add "$K8S_NODE_CIDR" dev "$K8S_NODE_IF"
ip link set "$K8S_NODE_PEER" up
ip link set "$K8S_NODE_IF" up
# -n, and /run first: else mount(8) makes /run/mount (its table of options) on the host.
for d in /run /etc /opt /var/lib /var/log; do
  o=$FRAMEPLANE_K8S_RUN/overlay$d
  mkdir -p "$o/upper" "$o/work"
  mount -n -t overlay overlay -o "lowerdir=$d,upperdir=$o/upper,workdir=$o/work" "$d"
done
set +e

# CMD runs as a child (not exec'd) so that the cluster is stopped after it, whatever it did.
"$@"
rc=$?
if [ -f "$FRAMEPLANE_K8S_RUN/started" ] && [ ! -f "$FRAMEPLANE_K8S_RUN/stopped" ]; then
  echo "in-netns: the cluster is still up after '$1'; stopping it" >&2
  "$HERE/stop.sh" >&2 || rc=1
fi
exit "$rc"
