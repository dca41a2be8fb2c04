# Shared by in-netns.sh, start.sh and stop.sh (sourced, not run): the names one test cluster uses
# and the clean-up of what it leaves outside its namespaces.
#
# What a run changes outside its network, mount and PID namespaces, and so must put back itself:
# - cgroups (not namespaced here): the kubelet's kubepods tree, kept under a root of this run's
#   own, /sys/fs/cgroup/<controller>/frameplane-k8s-<id>, so that two runs at once (each in its
#   namespaces) never see each other's pods as orphans to remove.
# - six global sysctls the kubelet sets at start (vm.overcommit_memory=1, kernel.panic=10,
#   kernel.panic_on_oops=1, ...): recorded before, put back once the node is Ready and at the end.
#   Runs at once take turns (a lock) so that none records another's kubelet's values as the host's.
# - its work dir /tmp/frameplane-k8s-<id> (dockerd's data, etcd, the kubelet's root, the logs).
# Everything else (docker0, veths, iptables chains, ip_forward, bridge-nf-call-iptables, mounts,
# processes, the files written under /run, /etc, /opt, /var/lib and /var/log, which are overlays
# there) lives in the namespaces and goes with them.

# The node's own address, on a veth inside the network namespace (this kernel has no dummy
# driver). The kubelet refuses a loopback node IP, and it only has to be local: no packet to it
# leaves the namespace, which has no link to the outside at all.
K8S_NODE_IF=fp-node0
K8S_NODE_PEER=fp-node1
K8S_NODE_CIDR=10.254.254.2/24
# Docker's bridge, where each pod gets its own address.
K8S_POD_BRIDGE_CIDR=172.17.0.1/16
K8S_SYSCTLS="vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops
  kernel/keys/root_maxkeys kernel/keys/root_maxbytes"

K8S_CACHE=${FRAMEPLANE_K8S_CACHE:-/var/cache/frameplane/k8s}
# Held from a kubelet's start to the putting back of the sysctls, and to record them.
K8S_SYSCTL_LOCK=$K8S_CACHE/.sysctl.lock

k8s_run_dir() { echo "/tmp/frameplane-k8s-$1"; }
k8s_cgroup_name() { echo "frameplane-k8s-$1"; }

# Refuses to go on outside the namespaces in-netns.sh makes (a kubelet and a dockerd started in
# the host's namespaces would change the host's network).
k8s_require_netns() {
  if [ "${FRAMEPLANE_K8S_NETNS:-}" != inside ] || ! ip link show "$K8S_NODE_IF" >/dev/null 2>&1
  then
    echo "$(basename "$0"): run it inside test/kubernetes/cluster/in-netns.sh" >&2
    exit 1
  fi
}

k8s_save_sysctls() { # FILE
  local s
  for s in $K8S_SYSCTLS; do echo "$s $(cat "/proc/sys/$s")"; done >"$1"
}

k8s_restore_sysctls() { # FILE; prints what it changed back
  local s v
  [ -f "$1" ] || return 0
  while read -r s v; do
    if [ "$(cat "/proc/sys/$s")" != "$v" ]; then
      echo "$v" >"/proc/sys/$s" && echo "restored $s=$v"
    fi
  done <"$1"
}

# Creates the cgroup root of run ID in every hierarchy; cpuset needs its cpus and mems set
# before a task (or a child that inherits them) can join.
k8s_make_cgroups() { # ID
  local name d
  name=$(k8s_cgroup_name "$1")
  for d in /sys/fs/cgroup/*/; do
    mountpoint -q "$d" || continue
    mkdir -p "$d$name"
    if [ -f "$d$name/cpuset.cpus" ]; then
      cat "${d}cpuset.cpus" >"$d$name/cpuset.cpus"
      cat "${d}cpuset.mems" >"$d$name/cpuset.mems"
    fi
  done
}

# Removes the cgroup root of run ID, deepest first. Fails if a directory stays (a task in it).
k8s_remove_cgroups() { # ID
  local name d left=0
  name=$(k8s_cgroup_name "$1")
  for d in /sys/fs/cgroup/*/"$name"; do
    [ -d "$d" ] || continue
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
      [ -d "$d" ] || break
      sleep 0.5
    done
    if [ -d "$d" ]; then echo "cgroup $d is still there" >&2; left=1; fi
  done
  return $left
}
