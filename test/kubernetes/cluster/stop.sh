#!/bin/bash
# stop.sh: stops the test cluster start.sh started (inside in-netns.sh) and removes what it
# leaves: the pods' containers, every process it started (by their pid files, then any whose
# command line names the run's work dir: containerd, its shims), the mounts under the work dir,
# the cgroup root of the run (kubepods under it), the host's sysctls.
# Idempotent. Exits non-zero if something could not be removed; writes $RUN/stopped otherwise.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
k8s_require_netns
S=${FRAMEPLANE_K8S_RUN:?}
ID=${FRAMEPLANE_K8S_ID:?}
failed=0

alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }
stop_pid() { # PID [GRACE seconds]: SIGTERM, then SIGKILL after GRACE
  local pid=$1 grace=${2:-10} i
  alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null
  for ((i = 0; i < grace * 10; i++)); do alive "$pid" || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
  for ((i = 0; i < 50; i++)); do alive "$pid" || return 0; sleep 0.1; done
  echo "stop.sh: process $pid does not die" >&2
  failed=1
}
stop_daemon() { # NAME [GRACE]
  [ -f "$S/$1.pid" ] && stop_pid "$(cat "$S/$1.pid")" "${2:-10}"
  return 0
}

# First what would start pods again, then the kubelet; the containers then go with dockerd's API.
stop_daemon controller-manager
stop_daemon scheduler
stop_daemon kubelet
if [ -S "$S/docker.sock" ] && [ -f "$S/dockerd.pid" ] && alive "$(cat "$S/dockerd.pid")"; then
  d() { curl -sf --max-time 30 --unix-socket "$S/docker.sock" "$@"; }
  for c in $(d 'http://d/containers/json?all=1' | jq -r '.[].Id'); do
    d -X DELETE "http://d/containers/$c?force=1&v=1" >/dev/null || true
  done
fi
stop_daemon dockerd 20
stop_daemon apiserver
stop_daemon etcd
# containerd and its shims, started by dockerd: their command lines name the run's dir.
for p in /proc/[0-9]*; do
  pid=${p#/proc/}
  [ "$pid" = $$ ] && continue
  grep -qF "$S/" "$p/cmdline" 2>/dev/null && stop_pid "$pid" 5
done

# Mounts: dockerd's overlays and shm, the kubelet's secret volumes, all under the work dir.
for _ in 1 2 3; do
  points=$(awk -v s="$S/" '{ gsub(/\\040/, " ", $5) } index($5, s) == 1 { print $5 }' \
    /proc/self/mountinfo | sort -r)
  [ -z "$points" ] && break
  while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done <<<"$points"
done
if awk -v s="$S/" 'index($5, s) == 1 { f = 1 } END { exit !f }' /proc/self/mountinfo; then
  echo "stop.sh: mounts are left under $S" >&2
  failed=1
fi

k8s_remove_cgroups "$ID" || failed=1
k8s_restore_sysctls "$S/host-sysctls" | sed 's/^/stop.sh: /'
# The big parts of the work dir; its logs stay for in-netns.sh (kept if the run failed).
rm -rf "$S/docker" "$S/kubelet" "$S/dockershim" "$S/etcd" "$S/controller-manager" \
  "$S/volumes" || failed=1
[ "$failed" = 0 ] && touch "$S/stopped"
exit "$failed"
