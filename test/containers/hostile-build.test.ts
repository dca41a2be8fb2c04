// Issue 34, items 1, 6 (Docker builds), 7 and the build network, end to end: the real service
// with its built-in agent on a real Engine, a tenant deploying the shared hostile repository
// (test/isolation/hostile.ts). Each hostile Dockerfile's deployment ends failed with a message
// that says why: a Dockerfile that is a dangling link (whose target root would have created) or
// a directory; `FROM` another frame's image by name; `COPY --from` another frame's image by id;
// `FROM` a short id of an untagged image of another frame's build; `ADD` from a loopback
// listener of the test's, which sees no connection. An honest Dockerfile then builds, on the
// builds' own network, and may use its own frame's earlier image.
import { describe, expect, inject, it } from 'vitest';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { imageRepo } from '../../src/runner/builder/image-reference.ts';
import { dockerClient } from '../../src/runner/runtimes/docker.ts';
import { ATTACKS, hostileRepo, type Hostile } from '../isolation/hostile.ts';
import { http } from '../faults/helpers/service.ts';
import { withService, type Frame, type Tenant } from '../isolation/scenario.ts';
import { gitFixture, until } from '../runner/fixture.ts';

const docker = dockerClient();

/** A loopback listener standing in for the host's services; it counts who connects. */
async function listener() {
  let connections = 0;
  const server = createServer((s) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as { port: number }).port,
    connections: () => connections,
    close: () => new Promise((r) => server.close(r)),
  };
}

/** The images of a frame, newest first. */
const imagesOf = async (frameId: string) =>
  (
    await docker.listImages({ filters: JSON.stringify({ label: [`frameplane.frame=${frameId}`] }) })
  ).sort((a, b) => b.Created - a.Created);

/** Connections of containers to `network` between two instants (seconds). */
async function connectsTo(network: string, since: number, until: number) {
  const stream = await docker.getEvents({
    since,
    until,
    filters: JSON.stringify({ type: ['network'], event: ['connect'] }),
  } as object);
  let text = '';
  for await (const chunk of stream as AsyncIterable<Buffer>) text += chunk.toString();
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((e) => e.Actor?.Attributes?.name === network);
}

/** The frame's first deployment once it ended (a refused first build leaves the frame `Error`). */
async function expectRefused(tenant: Tenant, f: Frame, why: RegExp) {
  const frame = await until(
    `${f.json.name}'s deployment to end`,
    async () => {
      const r = await http(tenant.base, 'GET', `${f.path}?wait_for=Online&timeout=5`, {
        token: tenant.token,
        timeoutMs: 10_000,
      });
      const status = r.json?.latest_deployment?.status;
      return status === 'failed' || status === 'succeeded' ? r.json : undefined;
    },
    240_000,
  );
  expect(frame.latest_deployment, f.json.name).toMatchObject({
    status: 'failed',
    failure_reason: 'build_failed',
    failure_message: expect.stringMatching(why),
  });
}

const OWN_APP = `require('http').createServer((q, s) => s.end('from its own image'))
  .listen(Number(process.env.PORT));\n`;

const app = (base: string, extra = '') =>
  `FROM ${base}\nWORKDIR /app\nCOPY . /app\n${extra}USER 1000:1000\nCMD ["node", "server.js"]\n`;

describe.each(['docker', 'swarm'] as const)('hostile Dockerfiles on the %s runtime', (runtime) => {
  it('are refused with their reason, touch nothing, and an honest one still builds', {
    timeout: 600_000,
  }, async () => {
    const base = inject('frameBaseImage');
    const loopback = await listener();
    let hostile: Hostile | undefined;
    const repos = (root: string) => {
      hostile = hostileRepo(root);
      gitFixture(root).pushApp('victim');
      return join(root, 'git');
    };
    try {
      await withService(runtime, repos, {}, async ({ tenant }) => {
        if (!hostile) throw new Error('no hostile repository');
        // Another tenant's frame, as seen by a former member: its image's name and ids.
        const victim = await tenant.frame('victim', 'app');
        expect((await tenant.settled(victim)).status).toBe('Online');
        const [image] = await imagesOf(victim.json.id);
        const tag = image?.RepoTags?.find((t) => t.startsWith(imageRepo(victim.json.id)));
        const parent = image?.ParentId.replace(/^sha256:/, '');
        expect(tag && parent, JSON.stringify(image)).toBeTruthy();

        hostile.pushFiles('dockerfile-dir', { 'Dockerfile/README': 'not a file\n' });
        hostile.pushFiles('from-other-frame', {
          Dockerfile: `FROM ${tag}\nCMD ["node", "server.js"]\n`,
        });
        hostile.pushFiles('copy-other-id', {
          Dockerfile: app(base, `COPY --from=${image?.Id} /app /stolen\n`),
        });
        hostile.pushFiles('from-intermediate', {
          Dockerfile: `FROM ${parent?.slice(0, 12)}\nCMD ["node", "server.js"]\n`,
        });
        hostile.pushFiles('add-loopback', {
          Dockerfile: app(base, `ADD http://127.0.0.1:${loopback.port}/secret /secret\n`),
        });
        const attacks: Array<[string, RegExp]> = [
          [ATTACKS.dockerfileLink, /Dockerfile is a symbolic link: Frameplane builds only/],
          ['dockerfile-dir', /Dockerfile is a directory/],
          ['from-other-frame', /line 1: FROM frameplane\/.* names another frame's images/],
          [
            'copy-other-id',
            /line 4: COPY --from sha256:[0-9a-f]{64}: an image built here that is not this/,
          ],
          [
            'from-intermediate',
            /line 1: FROM [0-9a-f]{12}: an image built here that is not this frame's/,
          ],
          ['add-loopback', /line 4: ADD from a URL .* fetch it in a RUN step instead/],
        ];
        const frames = await Promise.all(
          attacks.map(([branch]) => tenant.frame(branch, 'hostile', branch)),
        );
        for (const [k, [, why]] of attacks.entries())
          await expectRefused(tenant, frames[k] as Frame, why);
        expect(hostile.victimHarm()).toEqual({ created: [], secretChanged: false });
        expect(loopback.connections()).toBe(0);

        // An honest Dockerfile builds, its RUN steps on the builds' network (whose resolver is
        // the Engine's own, 127.0.0.11, unlike Docker's default bridge); a step of its own,
        // which no layer cached by an earlier run can stand in for...
        hostile.pushFiles('honest', {
          Dockerfile: app(base, `RUN echo ${runtime} ${Date.now()} && cat /etc/resolv.conf\n`),
        });
        const since = Math.floor(Date.now() / 1000);
        const honest = await tenant.frame('honest', 'hostile', 'honest');
        expect((await tenant.settled(honest)).status).toBe('Online');
        expect(await tenant.get(honest)).toMatchObject({ status: 200, body: 'hostile up' });
        expect(await tenant.logs(honest)).toMatch(/nameserver 127\.0\.0\.11/);
        const connects = await connectsTo('frameplane-builds', since, Math.ceil(Date.now() / 1000));
        expect(connects.length).toBeGreaterThan(0);

        // ... and may start from its own frame's earlier image.
        const [mine] = await imagesOf(honest.json.id);
        const own = mine?.RepoTags?.[0];
        hostile.pushFiles('honest', {
          'own.js': OWN_APP,
          Dockerfile: `FROM ${own}\nCOPY own.js /app/own.js\nCMD ["node", "own.js"]\n`,
        });
        const deploy = await http(tenant.base, 'POST', `${honest.path}/deploy`, {
          token: tenant.token,
          body: {},
        });
        expect(deploy.status).toBe(202);
        await until(
          'the honest frame on its own image',
          async () => {
            const r = await tenant.get(honest);
            return 'body' in r && r.body === 'from its own image';
          },
          180_000,
        );
      });
    } finally {
      await loopback.close();
    }
  });
});
