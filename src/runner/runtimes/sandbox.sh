#!/bin/bash
# The inside of Frameplane's process-runtime sandbox (see sandbox.ts, which starts it).
#
# Runs as pid 1 of fresh mount/pid/ipc/uts (and net, and user when the agent is not root)
# namespaces made by `unshare`, with an empty environment and all the power of those
# namespaces; nothing of the app runs before the last line. It
#   1. brings loopback up (own network namespace) and starts the forwarder that the host
#      reaches through a Unix socket (bound now, while that path still is the host's);
#   2. builds the view: tmpfs over every hidden dir, private /tmp, /dev/shm and /run, the
#      writable dirs (and read-only re-exposed ones) bound back at their own paths, ancestors
#      first, from descriptors opened before anything was covered;
#   3. remounts every other mount read-only (but /proc, /sys, /dev);
#   4. execs the app's launcher: a nested unshare (own pid namespace, fresh /proc; as root:
#      setpriv to an unprivileged uid with no capabilities; as a user: a nested user namespace,
#      which locks every mount made here) and a tiny sh init that reads the app's environment
#      from fd 3, cds to its cwd and runs `sh -c <command>` as its child.
#
# sandbox.sh [--net none|host] [--hide DIR]... [--writable DIR]... [--readonly DIR]...
#            [--expose SOCKET PORT --node NODE --forwarder FORWARDER.mjs]
#            (--root UID GID | --user UID GID) --cwd DIR -- COMMAND
set -u
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH

die() {
  echo "frameplane sandbox: $*" >&2
  exit 125
}

net=host cwd= sock= port= node= forwarder= mode= uid= gid=
hide=() writable=() readonly=()
while (($#)); do
  case $1 in
    --net) net=$2; shift 2 ;;
    --hide) hide+=("$2"); shift 2 ;;
    --writable) writable+=("$2"); shift 2 ;;
    --readonly) readonly+=("$2"); shift 2 ;;
    --expose) sock=$2 port=$3; shift 3 ;;
    --node) node=$2; shift 2 ;;
    --forwarder) forwarder=$2; shift 2 ;;
    --root | --user) mode=${1#--} uid=$2 gid=$3; shift 3 ;;
    --cwd) cwd=$2; shift 2 ;;
    --) shift; break ;;
    *) die "unknown argument: $1" ;;
  esac
done
(($# == 1)) || die "expected one command after --"
[[ -n $mode && -n $cwd ]] || die "missing --root/--user or --cwd"
command=$1

# 1. Network.
if [[ $net == none ]]; then
  ip link set lo up || die "cannot bring loopback up"
fi
if [[ -n $sock ]]; then
  [[ $net == none ]] || die "--expose needs --net none"
  # Never with the app's environment; as root it drops to the app's uid once listening, as a
  # user it has no capabilities (it binds the socket with the user's own rights on the host).
  # It says "ready" on stdout once listening (and, as root, no longer root).
  if [[ $mode == root ]]; then
    coproc FWD { exec env -i "$node" "$forwarder" "$sock" "$port" "$uid" "$gid" </dev/null 3<&-; }
  else
    coproc FWD {
      exec setpriv --no-new-privs --inh-caps=-all --bounding-set=-all -- \
        env -i "$node" "$forwarder" "$sock" "$port" </dev/null 3<&-
    }
  fi
  read -r -t 10 ready <&"${FWD[0]}" || ready=
  [[ $ready == ready ]] || die "the forwarder did not listen on $sock"
  f0=${FWD[0]} f1=${FWD[1]}
  exec {f0}<&- {f1}>&-
fi

# 2. The view. Every operation on a path comes after those on its ancestors (sorted by
#    length); bound dirs are taken from descriptors opened before any mount covered them.
declare -A fd=()
for d in "${writable[@]}" "${readonly[@]}" /run/systemd/resolve; do
  [[ -d $d && -z ${fd[$d]:-} ]] || continue
  exec {f}<"$d" || die "cannot open $d"
  fd[$d]=$f
done
ops=()
for d in "${hide[@]}"; do ops+=("${#d} hide $d"); done
for d in /run /tmp /dev/shm; do ops+=("${#d} private $d"); done
for d in "${writable[@]}"; do ops+=("${#d} writable $d"); done
for d in "${readonly[@]}" /run/systemd/resolve; do ops+=("${#d} readonly $d"); done
while read -r _ op d; do
  [[ -n $op ]] || continue
  case $op in
    hide | private)
      mkdir -p -- "$d" 2>/dev/null # inside another hidden dir or private /tmp: empty there too
      [[ -d $d ]] || continue
      # Hidden dirs only hold the mount points of writable dirs (and become read-only); the
      # private /tmp gets tmpfs's default size (half the RAM, counted as the app's memory).
      if [[ $op == hide ]]; then o=mode=755,size=1m; else o=mode=1777; fi
      mount -t tmpfs -o "$o,nosuid,nodev" frameplane-sandbox "$d" || die "cannot hide $d"
      ;;
    writable | readonly)
      [[ -n ${fd[$d]:-} ]] || { [[ $op == readonly ]] && continue; die "not a directory: $d"; }
      mkdir -p -- "$d" 2>/dev/null
      mount --no-canonicalize --bind "/proc/self/fd/${fd[$d]}" "$d" || die "cannot bind $d"
      ;;
  esac
done < <(printf '%s\n' "${ops[@]}" | sort -n -s -k1,1)
for f in "${fd[@]}"; do exec {f}<&-; done

# 3. Everything else read-only. A mount that cannot be remounted must be out of reach
#    (covered by a mount made above): if it is still a mount point here, give up.
declare -A keep=([/tmp]=1 [/dev/shm]=1)
for d in "${writable[@]}"; do keep[$d]=1; done
mapfile -t points < <(cut -d' ' -f5 /proc/self/mountinfo)
for p in "${points[@]}"; do
  [[ $p == *\\* ]] && p=$(printf '%b' "$(sed 's/\\\([0-7][0-7][0-7]\)/\\0\1/g' <<<"$p")")
  case $p in /proc | /proc/* | /sys | /sys/* | /dev | /dev/*) continue ;; esac
  [[ -n ${keep[$p]:-} ]] && continue
  if ! mount -o remount,bind,ro -- "$p" 2>/dev/null; then
    mountpoint -q -- "$p" 2>/dev/null && die "cannot make $p read-only"
  fi
done

# 4. The app. Its environment comes on fd 3 (sh `export` lines), read only by the unprivileged
#    init, so no program run above ever saw it (LD_PRELOAD, NODE_OPTIONS...).
init='_fp_env=$(cat <&3) || exit 125
exec 3<&-
eval "$_fp_env" || exit 125
unset _fp_env
cd -- "$1" || exit 125
/bin/sh -c "$2"
exit $?'
if [[ $mode == root ]]; then
  exec unshare --pid --mount --fork --kill-child --mount-proc -- \
    setpriv --reuid="$uid" --regid="$gid" --clear-groups --no-new-privs --inh-caps=-all --bounding-set=-all -- \
    /bin/sh -c "$init" frameplane-sandbox "$cwd" "$command"
else
  exec unshare --user --map-user="$uid" --map-group="$gid" --pid --mount --fork --kill-child --mount-proc -- \
    setpriv --no-new-privs -- \
    /bin/sh -c "$init" frameplane-sandbox "$cwd" "$command"
fi
