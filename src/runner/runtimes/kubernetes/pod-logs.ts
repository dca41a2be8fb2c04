// The output of a frame's pods, streamed from the API server (the kubelet's log of the `app`
// container) into the frame's log (issue 40). One follow per pod while it lives. A follow ends
// when its container does (a crash, a restart); the next one asks from the last line's time on,
// and lines at or before it are dropped, so a restart neither loses nor repeats a line.
import { PassThrough } from 'node:stream';
import { createInterface } from 'node:readline';
import { Log } from '@kubernetes/client-node';
import type { Cluster } from './cluster.ts';
import { CONTAINER } from './names.ts';

const AGAIN_MS = 1000;

export interface PodLogs {
  /** Follows the pods named (each under its replica index); stops following the others. */
  follow(namespace: string, pods: Array<{ name: string; replica: number }>): void;
  stop(): void;
}

/** `2026-11-29T10:00:00.123456789Z line` → its time (RFC 3339, as given) and the line. */
export function splitStamp(raw: string): { at: string; line: string } {
  const space = raw.indexOf(' ');
  if (space < 0) return { at: raw, line: '' };
  return { at: raw.slice(0, space), line: raw.slice(space + 1) };
}

/** RFC 3339 times with up to 9 digits of fraction, compared as instants. */
export function laterThan(a: string, b: string): boolean {
  const norm = (t: string) => {
    const m = /^(.*?)(?:\.(\d+))?Z$/.exec(t);
    if (!m) return t;
    return `${m[1]}.${(m[2] ?? '').padEnd(9, '0')}Z`;
  };
  return norm(a) > norm(b);
}

export function podLogs(c: Cluster, onLine: (replica: number, line: string) => void): PodLogs {
  const log = new Log(c.config);
  const following = new Map<string, { replica: number; abort?: AbortController; last: string }>();
  let stopped = false;

  async function followOne(namespace: string, name: string) {
    const f = following.get(name);
    if (!f || stopped) return;
    const out = new PassThrough();
    const lines = createInterface({ input: out });
    lines.on('line', (raw) => {
      const { at, line } = splitStamp(raw);
      if (f.last && !laterThan(at, f.last)) return;
      f.last = at;
      onLine(f.replica, line);
    });
    const again = () => {
      if (stopped || following.get(name) !== f) return;
      setTimeout(() => void followOne(namespace, name), AGAIN_MS).unref();
    };
    out.on('end', again);
    try {
      f.abort = await log.log(namespace, name, CONTAINER, out, {
        follow: true,
        timestamps: true,
        ...(f.last ? { sinceTime: f.last } : {}),
      });
    } catch {
      // Not started yet, or gone: asked again while the pod is followed.
      out.destroy();
      again();
    }
  }

  return {
    follow(namespace, pods) {
      const wanted = new Map(pods.map((p) => [p.name, p.replica]));
      for (const [name, f] of following) {
        if (wanted.has(name)) continue;
        following.delete(name);
        f.abort?.abort();
      }
      for (const [name, replica] of wanted) {
        const f = following.get(name);
        if (f) {
          f.replica = replica;
          continue;
        }
        following.set(name, { replica, last: '' });
        void followOne(namespace, name);
      }
    },
    stop() {
      stopped = true;
      for (const f of following.values()) f.abort?.abort();
      following.clear();
    },
  };
}
