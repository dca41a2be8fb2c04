#!/bin/bash
# W=DIR build.sh: builds the test cluster's Kubernetes v1.20.2 from Debian bookworm's source
# package `kubernetes` (the full vendored tree; only Debian's repositories are used, GOPROXY=off):
# kube-apiserver, kube-controller-manager, kube-scheduler and kubelet, plus the pod sandbox's
# `pause` (build/pause/linux/pause.c, static: it becomes a FROM-scratch image). Into
# $W/k8s/_output/bin. About 7-10 minutes on 2 cores, 1.4 GB of memory, 3.3 GB of disk.
# Run by binaries.sh, which keeps the result in a cache keyed by this file's hash: a change here
# means a rebuild.
set -euo pipefail
# The Debian mirror this machine already uses (its apt sources name it).
MIRROR=$( (grep -rhE '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
  || true) | grep -oE 'https?://[^ ]+/debian/?( |$)' | head -1 | tr -d ' ')
W=${W:?set W to a work directory}
mkdir -p "$W/apt/lists/partial" "$W/apt/cache/archives/partial"
cd "$W"
PKGS="golang-go etcd-server rsync jq dpkg-dev gcc libc6-dev golang-github-modern-go-reflect2-dev"
apt-get install -y -qq --no-install-recommends $PKGS >/dev/null 2>&1 \
  || { apt-get update -qq && apt-get install -y -qq --no-install-recommends $PKGS >/dev/null; }
cat > apt/sources.list <<S
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR bookworm main
S
touch apt/status
cat > apt/apt.conf <<C
Dir::Etc::SourceList "$W/apt/sources.list"; Dir::Etc::SourceParts "/dev/null";
Dir::State::Lists "$W/apt/lists"; Dir::Cache "$W/apt/cache"; Dir::State::status "$W/apt/status";
C
APT_CONFIG=$W/apt/apt.conf apt-get update -qq
V=1.20.5+really1.20.2-1.1+deb12u1
APT_CONFIG=$W/apt/apt.conf apt-get source -qq --download-only "kubernetes=$V" 2>/dev/null
dpkg-source -x "kubernetes_$V.dsc" k8s >/dev/null
cd k8s
# The tree vendors modern-go/reflect2 1.0.1, whose map iteration corrupts memory under Go >= 1.18
# (the API server dies within a minute: "fatal error: fault" in mapiterinit; reflect2 issue 24).
# Debian's 1.0.2 has the fix and the same API.
R=vendor/github.com/modern-go/reflect2
rm -f $R/*.go $R/*.s
DEB=/usr/share/gocode/src/github.com/modern-go/reflect2
cp "$DEB"/*.go "$DEB"/*.s $R/
GOPROXY=off GOFLAGS= GOCACHE=$W/gocache make \
  WHAT="cmd/kube-apiserver cmd/kube-controller-manager cmd/kube-scheduler cmd/kubelet" \
  KUBE_GIT_VERSION=v1.20.2 KUBE_GIT_TREE_STATE=clean \
  KUBE_GIT_COMMIT=faecb196815e248d3ecfb03c680a4507229c2a56
gcc -Os -Wall -static -DVERSION=v3.2 -o _output/bin/pause build/pause/linux/pause.c
ls -la _output/bin/
