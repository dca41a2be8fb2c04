// What a private dockerd changes on the host, and putting it back. dockerd makes bridges
// (docker0, docker_gwbridge, br-<network id> for each network such as frameplane-frames), adds
// chains DOCKER* and rules to FORWARD and POSTROUTING, sets the FORWARD policy to DROP and turns
// ip_forward on; none of it goes away when it stops (../shared/NOTES.md). So the host is
// recorded before dockerd starts, and after it has stopped restoreHost() deletes the bridges it
// made and restores each iptables table that changed with iptables-restore; hostChanges() says
// what still differs, for the teardown to fail loudly on.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';

export interface HostSnapshot {
  links: string[];
  ipForward: string; // /proc/sys/net/ipv4/ip_forward
  iptables: Record<string, string>; // "iptables:filter" -> `iptables-save -t filter`
}

const FAMILIES = ['iptables', 'ip6tables'] as const;
const TABLES = ['filter', 'nat', 'mangle', 'raw'] as const;
const IP_FORWARD = '/proc/sys/net/ipv4/ip_forward';
/** The bridges dockerd makes: the default one, swarm's, and one per user-defined network. */
const DOCKER_BRIDGE = /^(?:docker0|docker_gwbridge|br-[0-9a-f]{12})$/;

const run = (cmd: string, args: string[], input?: string) =>
  spawnSync(cmd, args, { encoding: 'utf8', input });

export function links(): string[] {
  try {
    return readdirSync('/sys/class/net');
  } catch {
    return [];
  }
}

function masterOf(link: string): string | undefined {
  try {
    return basename(readlinkSync(`/sys/class/net/${link}/master`));
  } catch {
    return undefined;
  }
}

function save(fam: string, table: string): string | undefined {
  const r = run(`${fam}-save`, ['-t', table]);
  return r.status === 0 ? r.stdout : undefined;
}

/** A table as iptables-save prints it, without its comments (dates) and packet counters. */
function rulesOf(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => l.replace(/ \[\d+:\d+\]$/, ''));
}

function readIpForward(): string {
  try {
    return readFileSync(IP_FORWARD, 'utf8').trim();
  } catch {
    return ''; // no procfs
  }
}

export function snapshotHost(): HostSnapshot {
  const iptables: Record<string, string> = {};
  for (const fam of FAMILIES)
    for (const t of TABLES) {
      const text = save(fam, t);
      if (text !== undefined) iptables[`${fam}:${t}`] = text;
    }
  return { links: links(), ipForward: readIpForward(), iptables };
}

/** Puts back what dockerd changed since `before`; dockerd and its processes must be gone. */
export function restoreHost(before: HostSnapshot): string[] {
  const done: string[] = [];
  const bridges = links().filter((l) => DOCKER_BRIDGE.test(l) && !before.links.includes(l));
  // Ends of veth pairs still on those bridges (containers the daemon could not tear down) first.
  const leftovers = links().filter((l) => bridges.includes(masterOf(l) ?? ''));
  for (const l of [...leftovers, ...bridges])
    if (run('ip', ['link', 'del', l]).status === 0) done.push(`ip link del ${l}`);
  for (const [key, text] of Object.entries(before.iptables)) {
    const [fam = '', table = ''] = key.split(':');
    const now = save(fam, table);
    if (now === undefined || rulesOf(now).join('\n') === rulesOf(text).join('\n')) continue;
    // Replaces the whole table: its chains, rules and policies as they were.
    const r = run(`${fam}-restore`, ['-w'], text);
    if (r.status === 0) done.push(`${fam}-restore ${table}`);
    else done.push(`${fam}-restore ${table} FAILED: ${r.stderr.trim()}`);
  }
  if (before.ipForward && readIpForward() !== before.ipForward) {
    try {
      writeFileSync(IP_FORWARD, before.ipForward);
      done.push(`net.ipv4.ip_forward=${before.ipForward}`);
    } catch {
      /* read-only procfs */
    }
  }
  return done;
}

/** What differs from `before` on the host: new links, iptables rules and policies, ip_forward. */
export function hostChanges(before: HostSnapshot): string[] {
  const changes = links()
    .filter((l) => !before.links.includes(l))
    .map((l) => `link ${l} was added`);
  for (const [key, text] of Object.entries(before.iptables)) {
    const [fam = '', table = ''] = key.split(':');
    const was = rulesOf(text);
    const now = rulesOf(save(fam, table) ?? '');
    for (const l of now.filter((x) => !was.includes(x))) changes.push(`${key}: + ${l}`);
    for (const l of was.filter((x) => !now.includes(x))) changes.push(`${key}: - ${l}`);
  }
  const ipForward = readIpForward();
  if (before.ipForward && ipForward !== before.ipForward)
    changes.push(`net.ipv4.ip_forward is ${ipForward}, was ${before.ipForward}`);
  return changes;
}
