#!/bin/bash
# binaries.sh: prints the directory holding the test cluster's binaries (kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet, pause), building them first if needed.
#
# A build takes 7-10 minutes, so its result is kept outside the clone, in
# ${FRAMEPLANE_K8S_CACHE:-/var/cache/frameplane/k8s}/<hash of build.sh>: a machine that keeps that
# directory (a developer's, CI on the same machine) builds once per version of build.sh. The
# build's 3 GB work tree is removed afterwards, as are binaries of older versions of build.sh.
# One build at a time (flock); progress and errors go to stderr, only the path to stdout.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
CACHE=$K8S_CACHE
KEY=$(sha256sum "$HERE/build.sh" | cut -c1-16)
OUT=$CACHE/$KEY
BINS="kube-apiserver kube-controller-manager kube-scheduler kubelet pause"
complete() { for b in $BINS; do [ -x "$OUT/$b" ] || return 1; done; }

if ! complete; then
  mkdir -p "$CACHE"
  exec 9>"$CACHE/.lock"
  flock 9
  if ! complete; then
    W=$OUT.work
    LOG=$CACHE/$KEY.build.log
    echo "binaries.sh: building Kubernetes into $OUT (7-10 minutes; log in $LOG)" >&2
    rm -rf "$W" "$OUT.new"
    mkdir -p "$W" "$OUT.new"
    start=$SECONDS
    if ! W=$W bash "$HERE/build.sh" >"$LOG" 2>&1; then
      tail -n 30 "$LOG" >&2
      echo "binaries.sh: the build failed (log: $LOG; work tree kept in $W)" >&2
      exit 1
    fi
    for b in $BINS; do cp "$W/k8s/_output/bin/$b" "$OUT.new/$b"; done
    rm -rf "$OUT"
    mv "$OUT.new" "$OUT"
    rm -rf "$W"
    for d in "$CACHE"/*; do [ "$d" = "$OUT" ] || [ "$d" = "$LOG" ] || rm -rf "$d"; done
    echo "binaries.sh: built in $((SECONDS - start)) s" >&2
  fi
fi
echo "$OUT"
