// Runs a one-off container to its end on the test daemon: for tests of the image and the daemon.
// Every container carries the label frameplane.test=1, so a run's stop() removes what is left.
import { TEST_LABEL, dockerApi, dockerCall } from './docker.ts';

export interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  state: any;
}

/** Splits Docker's multiplexed log stream (8-byte frame headers) into stdout and stderr. */
export function demux(buf: Buffer): { stdout: string; stderr: string } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  for (let i = 0; i + 8 <= buf.length; ) {
    const len = buf.readUInt32BE(i + 4);
    (buf[i] === 2 ? err : out).push(buf.subarray(i + 8, i + 8 + len));
    i += 8 + len;
  }
  return {
    stdout: Buffer.concat(out).toString('utf8'),
    stderr: Buffer.concat(err).toString('utf8'),
  };
}

export async function runContainer(
  host: string,
  image: string,
  cmd: string[],
  opts: {
    user?: string;
    env?: string[];
    hostConfig?: Record<string, unknown>;
    timeoutMs?: number;
  } = {},
): Promise<RunResult> {
  const { Id: id } = await dockerCall(host, 'POST', '/containers/create', {
    Image: image,
    Cmd: cmd,
    User: opts.user,
    Env: opts.env,
    Labels: { [TEST_LABEL]: '1' },
    HostConfig: opts.hostConfig ?? {},
  });
  try {
    await dockerCall(host, 'POST', `/containers/${id}/start`);
    const wait = dockerCall(host, 'POST', `/containers/${id}/wait`);
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(
        () =>
          reject(
            new Error(
              `container ${cmd.join(' ')} still running after ${opts.timeoutMs ?? 60_000} ms`,
            ),
          ),
        opts.timeoutMs ?? 60_000,
      ).unref(),
    );
    const { StatusCode } = await Promise.race([wait, timeout]);
    const logs = await rawLogs(host, id);
    const info = await dockerCall(host, 'GET', `/containers/${id}/json`);
    return { exitCode: StatusCode, ...demux(logs), state: info.State };
  } finally {
    await dockerCall(host, 'DELETE', `/containers/${id}?force=1&v=1`, undefined, [404]).catch(
      () => {},
    );
  }
}

async function rawLogs(host: string, id: string): Promise<Buffer> {
  const a = await dockerApi(host, 'GET', `/containers/${id}/logs?stdout=1&stderr=1`);
  if (a.status !== 200) throw new Error(`logs of ${id}: ${a.status} ${a.text}`);
  return a.raw;
}
