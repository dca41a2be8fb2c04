// An image build (src/runner/builder/image.ts) on a fake Engine that records what it is asked: the
// repository's Dockerfile is read without following a link and checked before the Engine hears
// of the build; a generated Dockerfile is never written into the checkout but sent beside it in
// the context; builds run on their own network, on the classic builder.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { buildImage } from '../../src/runner/builder/image.ts';
import { BuildError } from '../../src/runner/runtimes/runtime.ts';
import { ATTACKS, hostileRepo, type Hostile } from '../isolation/hostile.ts';

let tmp: string;
let hostile: Hostile;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'fp-docker-build-'));
  hostile = hostileRepo(tmp);
  hostile.pushFiles('dockerfile-dir', { 'Dockerfile/README': 'a directory named Dockerfile\n' });
  hostile.pushFiles('from-other', { Dockerfile: 'FROM frameplane/someone-else:1\n' });
  hostile.pushFiles('honest-own', {
    Dockerfile:
      'FROM local/node:20\nRUN echo \\\n  # a comment\n  built\nCMD ["node", "server.js"]\n',
  });
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** An Engine that has `images`, pulls nothing, and keeps the context and options of a build. */
function fakeEngine(images: Record<string, object> = {}) {
  const calls: string[] = [];
  const build: { context?: Buffer; options?: Record<string, unknown> } = {};
  const docker = {
    listNetworks: async () => {
      calls.push('listNetworks');
      return [];
    },
    createNetwork: async (o: object) => calls.push(`createNetwork ${JSON.stringify(o)}`),
    getImage: (ref: string) => ({
      inspect: async () => {
        calls.push(`inspect ${ref}`);
        if (images[ref]) return images[ref];
        throw Object.assign(new Error('no such image'), { statusCode: 404 });
      },
    }),
    pull: async (ref: string) => {
      calls.push(`pull ${ref}`);
      throw new Error('no registry here');
    },
    buildImage: async (context: Readable, options: Record<string, unknown>) => {
      calls.push('build');
      const parts: Buffer[] = [];
      for await (const part of context) parts.push(part as Buffer);
      build.context = Buffer.concat(parts);
      build.options = options;
      return Readable.from([]);
    },
    modem: {
      followProgress: (_: unknown, done: (err: Error | null, out: unknown[]) => void) =>
        done(null, []),
    },
  };
  return { docker: docker as unknown as Docker, calls, build };
}

const request = (branch: string, lines: string[] = []) => ({
  frameId: '01JFRAME000000000000000000',
  deploymentId: 'dep',
  source: {
    gitBaseUrl: hostile.gitBaseUrl,
    owner: 'acme',
    repo: 'hostile',
    branch,
    commitSha: null,
  },
  onLine: (l: string) => lines.push(l),
  onFetched: () => {},
  signal: new AbortController().signal,
});

const tarNames = (tar: Buffer) =>
  execFileSync('tar', ['-t'], { input: tar }).toString().split('\n').filter(Boolean);
const tarFile = (tar: Buffer, name: string) =>
  execFileSync('tar', ['-xO', name], { input: tar }).toString();

describe('building an image of a hostile repository', () => {
  it('refuses a dangling link named Dockerfile: nothing made, the Engine not asked', async () => {
    const { docker, calls } = fakeEngine();
    const built = buildImage(docker, 'local/node:20', request(ATTACKS.dockerfileLink));
    await expect(built).rejects.toBeInstanceOf(BuildError);
    await expect(built).rejects.toMatchObject({
      reason: 'build_failed',
      message: expect.stringMatching(/Dockerfile is a symbolic link: Frameplane builds only/),
    });
    expect(hostile.victimHarm()).toEqual({ created: [], secretChanged: false });
    expect(calls).toEqual([]);
  });

  it('refuses a Dockerfile that is a directory', async () => {
    const { docker, calls } = fakeEngine();
    await expect(
      buildImage(docker, 'local/node:20', request('dockerfile-dir')),
    ).rejects.toMatchObject({
      reason: 'build_failed',
      message: expect.stringMatching(/Dockerfile is a directory/),
    });
    expect(calls).toEqual([]);
  });

  it("refuses a Dockerfile naming another frame's image before asking the Engine", async () => {
    const { docker, calls } = fakeEngine();
    await expect(buildImage(docker, 'local/node:20', request('from-other'))).rejects.toMatchObject({
      reason: 'build_failed',
      message: expect.stringMatching(
        /line 1: FROM frameplane\/someone-else:1 names another frame's/,
      ),
    });
    expect(calls).toEqual([]);
  });

  it('sends a generated Dockerfile beside the checkout, not in it, on its network', async () => {
    const { docker, calls, build } = fakeEngine();
    const release = await buildImage(docker, 'local/node:20', request(ATTACKS.markerLink));
    expect(release.artifact).toMatch(/^frameplane\/01jframe0+:[0-9a-f]{40}$/);
    const name = build.options?.dockerfile as string;
    expect(name).toMatch(/^\.frameplane-dockerfile-[0-9a-f]{16}$/);
    expect(build.options).toMatchObject({ networkmode: 'frameplane-builds', version: '1' });
    const names = tarNames(build.context as Buffer);
    expect(names).toContain(name);
    expect(names).toContain('./server.js');
    expect(names).not.toContain('./Dockerfile');
    expect(names.filter((n) => n.startsWith('./.git/'))).toEqual([]);
    expect(tarFile(build.context as Buffer, name)).toMatch(/^FROM local\/node:20\n/);
    const network = calls.find((c) => c.startsWith('createNetwork')) ?? '';
    expect(JSON.parse(network.slice('createNetwork '.length))).toMatchObject({
      Name: 'frameplane-builds',
      Driver: 'bridge',
      Options: { 'com.docker.network.bridge.enable_icc': 'false' },
    });
  });

  it("builds the repository's own Dockerfile as checked, one instruction a line", async () => {
    const local = { RepoTags: ['local/node:20'], RepoDigests: [], Config: { OnBuild: null } };
    const { docker, calls, build } = fakeEngine({ 'local/node:20': local });
    await buildImage(docker, 'ignored/base:1', request('honest-own'));
    expect(calls).toContain('inspect local/node:20');
    expect(calls.filter((c) => c.startsWith('pull'))).toEqual([]);
    const name = build.options?.dockerfile as string;
    expect(tarFile(build.context as Buffer, name)).toBe(
      'FROM local/node:20\nRUN echo   built\nCMD ["node", "server.js"]\n',
    );
  });
});
