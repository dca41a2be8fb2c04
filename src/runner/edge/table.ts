// The routing table of the edge (CONTRACT 5b): which frame holds a host, and what the edge does
// for it: balance over its healthy replicas, or answer a page saying why it cannot. Pure data,
// the one source of truth: supervisors set their frame's route, and each data plane (the built-in
// one, server.ts; HAProxy's later) reads it or applies its changes (`onChange`), as kamal-proxy
// and HAProxy's Runtime API change routes in memory, never by restarting anything.
import type { Endpoint } from '../runtimes/runtime.ts';

/** What a frame's owner or its payer asked for: run it, stop it, or stopped for billing. */
export type FrameState = 'running' | 'stopped' | 'suspended';

export interface FrameRoute {
  frameId: string;
  /** Its own hostname and verified custom domains, as the server gave them. */
  hosts: readonly string[];
  state: FrameState;
  /** The replicas that may take requests now, in a stable order (the supervisor's). */
  upstreams: readonly Endpoint[];
}

/** Why the edge answers a page instead of an app. */
export type PageKind = 'unknown_host' | 'stopped' | 'suspended' | 'starting';

export type Target =
  | { kind: 'upstreams'; frameId: string; upstreams: readonly Endpoint[] }
  | { kind: 'page'; page: PageKind; frameId?: string };

/**
 * A Host header as the table keys it: lower case, without its port, without a trailing dot
 * (`Web.Example.COM.:8000` is `web.example.com`); an IPv6 literal keeps its brackets.
 * Undefined when nothing is left.
 */
export function normalizeHost(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  let host = raw.trim().toLowerCase();
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    host = end < 0 ? host : host.slice(0, end + 1);
  } else {
    const colon = host.indexOf(':');
    if (colon >= 0) host = host.slice(0, colon);
  }
  while (host.endsWith('.')) host = host.slice(0, -1);
  return host || undefined;
}

/** What the edge does for a frame in this route. */
export function targetOf(route: FrameRoute): Target {
  const frameId = route.frameId;
  if (route.state === 'suspended') return { kind: 'page', page: 'suspended', frameId };
  if (route.state === 'stopped') return { kind: 'page', page: 'stopped', frameId };
  if (route.upstreams.length === 0) return { kind: 'page', page: 'starting', frameId };
  return { kind: 'upstreams', frameId, upstreams: route.upstreams };
}

export const endpointKey = (e: Endpoint) =>
  'path' in e ? `unix:${e.path}` : `${e.host}:${e.port}`;

const sameRoute = (a: FrameRoute, b: FrameRoute) =>
  a.state === b.state &&
  a.hosts.length === b.hosts.length &&
  a.hosts.every((h, i) => h === b.hosts[i]) &&
  a.upstreams.length === b.upstreams.length &&
  a.upstreams.every((u, i) => endpointKey(u) === endpointKey(b.upstreams[i] as Endpoint));

export type RouteListener = (frameId: string, before?: FrameRoute, after?: FrameRoute) => void;

const UNKNOWN: Target = { kind: 'page', page: 'unknown_host' };

export class RoutingTable {
  private frames = new Map<string, { route: FrameRoute; target: Target; hosts: string[] }>();
  /** Host → the frames that claim it, first claimant first: it holds the host until it lets go. */
  private claims = new Map<string, string[]>();
  private listeners = new Set<RouteListener>();

  /** Sets a frame's route; a route equal to the one held changes nothing and tells no one. */
  set(route: FrameRoute): void {
    const held = this.frames.get(route.frameId);
    if (held && sameRoute(held.route, route)) return;
    const copy: FrameRoute = {
      frameId: route.frameId,
      hosts: [...route.hosts],
      state: route.state,
      upstreams: [...route.upstreams],
    };
    const hosts = [...new Set(copy.hosts.flatMap((h) => normalizeHost(h) ?? []))];
    // Hosts kept keep their place among the claimants; only those let go or new ones move.
    if (held)
      this.release(
        route.frameId,
        held.hosts.filter((h) => !hosts.includes(h)),
      );
    for (const h of hosts) {
      const claimants = this.claims.get(h);
      if (!claimants) this.claims.set(h, [route.frameId]);
      else if (!claimants.includes(route.frameId)) claimants.push(route.frameId);
    }
    this.frames.set(route.frameId, { route: copy, target: targetOf(copy), hosts });
    this.tell(route.frameId, held?.route, copy);
  }

  /** The frame left the agent: its hosts answer 404, or go to the next frame that claims them. */
  remove(frameId: string): void {
    const held = this.frames.get(frameId);
    if (!held) return;
    this.frames.delete(frameId);
    this.release(frameId, held.hosts);
    this.tell(frameId, held.route, undefined);
  }

  /** What the edge does for a request with this Host header. */
  resolve(host: string | undefined): Target {
    const key = normalizeHost(host);
    const frameId = key === undefined ? undefined : this.claims.get(key)?.[0];
    return (frameId && this.frames.get(frameId)?.target) || UNKNOWN;
  }

  route(frameId: string): FrameRoute | undefined {
    return this.frames.get(frameId)?.route;
  }

  routes(): FrameRoute[] {
    return [...this.frames.values()].map((f) => f.route);
  }

  /** Every endpoint some route balances over (a plane keeps connections to these only). */
  endpoints(): Set<string> {
    const keys = new Set<string>();
    for (const f of this.frames.values())
      for (const u of f.route.upstreams) keys.add(endpointKey(u));
    return keys;
  }

  /** Calls `listener` after every change; answers a function that stops it. */
  onChange(listener: RouteListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private release(frameId: string, hosts: string[]) {
    for (const h of hosts) {
      const left = this.claims.get(h)?.filter((id) => id !== frameId) ?? [];
      if (left.length > 0) this.claims.set(h, left);
      else this.claims.delete(h);
    }
  }

  private tell(frameId: string, before?: FrameRoute, after?: FrameRoute) {
    for (const l of this.listeners) l(frameId, before, after);
  }
}
