#!/bin/bash
# The inside of Frameplane's process-runtime sandbox (see sandbox.ts, which starts it).
#
# Runs as pid 1 of fresh mount/pid/ipc/uts/net namespaces made by the outer `unshare` (and of a
# user namespace where it is root when the agent is not root), with an empty environment and
# all the power of those namespaces; nothing of the app runs before step 5. It
#   1. joins the cgroups the agent made and configured for this app (writing 0, "the writer", to
#      each cgroup.procs), first, so that everything started below, app and forwarder, counts;
#   2. brings loopback, its only interface, up and starts the forwarder (forwarder.mjs): with
#      --expose the host reaches the app's 127.0.0.1:PORT through a Unix socket (bound now,
#      while that path still is the host's); with --egress the app's connections to
#      127.0.0.1:PORT go to the agent's proxy on a Unix socket of the host (the forwarder keeps
#      that socket's directory as its cwd: its one way back once the host's root is gone);
#   3. builds a new root, an allowlist, on a tmpfs mounted over /tmp: read-only /usr, /bin,
#      /sbin, /lib, /lib32, /lib64, /libx32 (symlinks on usr-merged hosts stay symlinks), /etc,
#      the --readonly dirs (node's installation when outside those) and /run/systemd/resolve
#      (DNS on systemd-resolved hosts); the --writable dirs at their own paths; a private /tmp
#      (mode 1777) and /dev/shm, tmpfs of --tmp-mb MB each; a /dev holding only null, zero,
#      full, random, urandom and tty (bound from the host) and the fd links; a fresh /proc of
#      this pid namespace; an empty /sys. Every dir is bound from a descriptor opened before
#      anything was covered, ancestors before descendants;
#   4. pivot_roots into it and detaches the old root (a chroot would leave the host's root
#      one nested namespace away; after this there is nothing to escape to), then remounts
#      every mount read-only, the root included, but the writable dirs, /tmp, /dev/shm, /proc
#      and the device nodes (what cannot be made read-only stops the sandbox);
#   5. starts the app in a user namespace of its own, where it can make no other:
#      `unshare --user --keep-caps` with new pid and mount namespaces and a fresh /proc. The
#      namespace maps only the app's uid and gid, each to itself on the host: as root, the maps
#      are written from here by a helper once the namespace exists (root in the parent may map
#      any id; unshare's --map-users would need newuidmap and /etc/subuid entries for root, and
#      plain --map-user would map the app's uid to the outside root); as a user, unshare writes
#      them itself (--map-user: the launcher's own uid, the only one it may map, is the app's;
#      the app cannot stay in the launcher's namespace, where its uid would be 0: this script's
#      mount(8) refuses a caller that is not uid 0). Mounts copied into this less privileged
#      namespace are locked (no umount, no remount). Neither uid is 0 in the new namespace, so
#      an exec would drop its capabilities: --keep-caps makes them ambient, and a tiny sh
#      holding them writes 0 to /proc/sys/user/max_user_namespaces (a per-namespace limit,
#      checked up the tree: the app's `unshare -U` fails with ENOSPC). prlimit sets
#      RLIMIT_NPROC (counted per user namespace and uid, so per sandbox) and RLIMIT_NOFILE;
#      setpriv drops to the app's uid and gid with no capabilities (permitted, effective,
#      inheritable, ambient and bounding sets empty) and no_new_privs; then the app's init
#      reads its environment from fd 3, cds to its cwd and runs `sh -c <command>` as its child.
#
# sandbox.sh [--cgroup DIR]... [--writable DIR]... [--readonly DIR]... [--tmp-mb MB]
#            [--nproc N] [--nofile N] [--expose SOCKET PORT] [--egress SOCKET PORT]
#            [--node NODE --forwarder FORWARDER.mjs]
#            (--root UID GID | --user UID GID) --cwd DIR -- COMMAND
set -u
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
umask 022

die() {
  echo "frameplane sandbox: $*" >&2
  exit 125
}

cwd= node= forwarder= mode= uid= gid= tmp_mb=256 nproc= nofile=
cgroups=() writable=() readonly=() forward=()
while (($#)); do
  case $1 in
    --cgroup) cgroups+=("$2"); shift 2 ;;
    --writable) writable+=("$2"); shift 2 ;;
    --readonly) readonly+=("$2"); shift 2 ;;
    --tmp-mb) tmp_mb=$2; shift 2 ;;
    --nproc) nproc=$2; shift 2 ;;
    --nofile) nofile=$2; shift 2 ;;
    --expose | --egress) forward+=("$1" "$2" "$3"); shift 3 ;;
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

# 1. Cgroups.
for c in "${cgroups[@]}"; do
  echo 0 >"$c/cgroup.procs" || die "cannot join the cgroup $c"
done

# 2. Network, forwarder. The forwarder never gets the app's environment; as root it drops to the
#    app's uid once listening, as a user it has no capabilities (it binds the --expose socket
#    with the user's own rights on the host). It says "ready" on stdout once listening (and, as
#    root, no longer root), and nothing after: we stop reading.
ip link set lo up || die "cannot bring loopback up"
if ((${#forward[@]})); then
  fwd=(env -i "$node" "$forwarder" "${forward[@]}")
  if [[ $mode == root ]]; then
    fwd+=(--uid "$uid" --gid "$gid")
  else
    fwd=(setpriv --no-new-privs --inh-caps=-all --bounding-set=-all -- "${fwd[@]}")
  fi
  exec {ready_fd}< <(exec "${fwd[@]}" </dev/null 3<&-)
  read -r -t 10 ready <&"$ready_fd" || ready=
  exec {ready_fd}<&-
  [[ $ready == ready ]] || die "the forwarder did not start (${forward[*]})"
fi

# 3. The new root. Sources first: a descriptor for every dir, before any mount covers it.
declare -A fd=()
ops=()
opendir() { # OP DIR
  exec {f}<"$2" || die "cannot open $2"
  fd[$2]=$f
  ops+=("${#2} $1 $2")
}
links=()
for d in /usr /bin /sbin /lib /lib32 /lib64 /libx32 /etc; do
  if [[ -L $d ]]; then
    links+=("$d" "$(readlink -- "$d")")
  elif [[ -d $d ]]; then
    opendir readonly "$d"
  fi
done
for d in "${readonly[@]}"; do opendir readonly "$d"; done
[[ -d /run/systemd/resolve ]] && opendir readonly /run/systemd/resolve
for d in "${writable[@]}"; do opendir writable "$d"; done
ops+=("4 tmpfs /tmp")

new=/tmp
mount -t tmpfs -o mode=755,size=1m,nosuid,nodev frameplane-root "$new" || die "cannot mount /"
mkdir -p "$new"/{proc,sys,dev,tmp}
for ((i = 0; i < ${#links[@]}; i += 2)); do
  ln -s -- "${links[i + 1]}" "$new${links[i]}" || die "cannot link ${links[i]}"
done
mount -t proc -o nosuid,nodev,noexec proc "$new/proc" || die "cannot mount /proc"
mount -t tmpfs -o mode=755,size=64k,nosuid,noexec frameplane-dev "$new/dev" ||
  die "cannot mount /dev"
for n in null zero full random urandom tty; do
  : >"$new/dev/$n" && mount --bind "/dev/$n" "$new/dev/$n" || die "cannot bind /dev/$n"
done
for n in stdin:0 stdout:1 stderr:2; do ln -s "/proc/self/fd/${n#*:}" "$new/dev/${n%:*}"; done
ln -s /proc/self/fd "$new/dev/fd"
mkdir "$new/dev/shm"
o=mode=1777,size=${tmp_mb}m,nosuid,nodev
mount -t tmpfs -o "$o" frameplane-shm "$new/dev/shm" || die "cannot mount /dev/shm"
while read -r _ op d; do
  [[ -n $op ]] || continue
  mkdir -p -- "$new$d" 2>/dev/null # in a tmpfs of ours: mount points on the way
  case $op in
    tmpfs) mount -t tmpfs -o "$o" frameplane-tmp "$new$d" || die "cannot mount $d" ;;
    # Recursive: under a user namespace, a dir holding locked mounts cannot be bound alone.
    *) mount --no-canonicalize --rbind "/proc/self/fd/${fd[$d]}" "$new$d" || die "cannot bind $d" ;;
  esac
done < <(printf '%s\n' "${ops[@]}" | sort -n -s -k1,1)
for f in "${fd[@]}"; do exec {f}<&-; done

# 4. Into it; the old root detached. Then everything read-only but what must be written.
cd "$new" && mkdir .old && pivot_root . .old || die "cannot pivot_root"
cd / && umount -l /.old && rmdir /.old || die "cannot detach the old root"
declare -A keep=([/proc]=1 [/tmp]=1 [/dev/shm]=1)
for n in null zero full random urandom tty; do keep[/dev/$n]=1; done
for d in "${writable[@]}"; do keep[$d]=1; done
mapfile -t points < <(cut -d' ' -f5 /proc/self/mountinfo)
for p in "${points[@]}"; do
  [[ $p == *\\* ]] && p=$(printf '%b' "$(sed 's/\\\([0-7][0-7][0-7]\)/\\0\1/g' <<<"$p")")
  [[ -n ${keep[$p]:-} ]] && continue
  mount -o remount,bind,ro,nosuid,nodev -- "$p" || die "cannot make $p read-only"
done

# 5. The app. Its environment comes on fd 3 (sh `export` lines), read only by the unprivileged
#    init, so no program run above ever saw it (LD_PRELOAD, NODE_OPTIONS...).
init='_fp_env=$(cat <&3) || exit 125
exec 3<&-
eval "$_fp_env" || exit 125
unset _fp_env
cd -- "$1" || exit 125
/bin/sh -c "$2"
exit $?'
# Run in the app's user namespace with its capabilities there, before the drop.
confine='echo 0 >/proc/sys/user/max_user_namespaces || exit 125
exec "$@"'
limits=()
hard() { # the inherited hard limit: prlimit may lower it, never raise it
  local h
  h=$(ulimit -H "$1")
  if [[ $h == unlimited ]] || (($2 < h)); then echo "$2"; else echo "$h"; fi
}
[[ -n $nproc ]] && limits+=("--nproc=$(hard -u "$nproc")")
[[ -n $nofile ]] && limits+=("--nofile=$(hard -n "$nofile")")
drop=(setpriv --no-new-privs --inh-caps=-all --bounding-set=-all)
if [[ $mode == root ]]; then
  # The helper waits until the app's side says it is in its new user namespace, writes the
  # maps of this process (then the inner unshare, in that namespace) and says go.
  pid=$$
  coproc MAPPER {
    read -r line && [[ $line == ready ]] || exit 1
    echo "$uid $uid 1" >"/proc/$pid/uid_map" && echo "$gid $gid 1" >"/proc/$pid/gid_map" &&
      echo go
  }
  # Reopened: bash keeps a coproc's close-on-exec flag on the copies `n<&fd` makes.
  exec 4<"/proc/self/fd/${MAPPER[0]}" 5>"/proc/self/fd/${MAPPER[1]}"
  confine='echo ready >&5 && read -r go <&4 && [ "$go" = go ] || exit 125
exec 4<&- 5>&-
'$confine
  userns=(--user)
  drop+=(--reuid="$uid" --regid="$gid" --clear-groups)
else
  userns=(--user --map-user="$uid" --map-group="$gid")
fi
chain=()
((${#limits[@]})) && chain+=(prlimit "${limits[@]}" --)
chain+=("${drop[@]}" -- /bin/sh -c "$init" frameplane-sandbox "$cwd" "$command")
exec unshare "${userns[@]}" --keep-caps --pid --mount --fork --kill-child --mount-proc -- \
  /bin/sh -c "$confine" frameplane-sandbox "${chain[@]}"
