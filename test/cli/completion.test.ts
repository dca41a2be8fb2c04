// `frameplane completion`: the scripts it prints, loaded in the real shells. bash is driven as
// its completion calls the function (COMP_WORDS, COMP_CWORD); fish answers `complete -C`; zsh
// runs interactively in a pseudo-terminal (util-linux `script`) and is sent TAB keys. zsh and
// fish are skipped where they are not installed (apt-get install zsh fish). Names (projects,
// frames, teams) come from a real service through `frameplane __complete`, which the scripts
// find on PATH as a user's shell would.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { newUser } from '../helpers/factories.ts';
import { createWebFrame, run, runJson, userEnv } from './run.ts';
import { serviceForFile, shopWorld } from './service.ts';

const dir = mkdtempSync(join(tmpdir(), 'frameplane-completion-'));
const exec = promisify(execFile);
const has = (shell: string) => spawnSync(shell, ['-c', 'exit 0']).status === 0;
const svc = serviceForFile();

// `frameplane` on PATH: the CLI of this checkout.
const bin = mkdtempSync(join(dir, 'bin-'));
const BIN = new URL('../../bin/frameplane.mjs', import.meta.url).pathname;
writeFileSync(join(bin, 'frameplane'), `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`);
chmodSync(join(bin, 'frameplane'), 0o755);
const PATH = `${bin}:${process.env.PATH ?? ''}`;

/** Ann, logged in, with projects Shop (frame web) and Shed, and team web-crew. */
let ann: Record<string, string>;
beforeAll(async () => {
  const world = await shopWorld(svc.t, svc.server);
  await runJson(createWebFrame(world.agent.id), world.env);
  await runJson(['projects', 'create', 'Shed'], world.env);
  await runJson(['teams', 'create', 'Web Crew'], world.env);
  ann = { ...world.env, PATH };
});

/** The script for `shell`, as the CLI prints it, saved in a file. */
async function script(shell: string): Promise<string> {
  const r = await run(['completion', shell], {});
  expect(r.code, r.stderr).toBe(0);
  const file = join(dir, `frameplane.${shell}`);
  writeFileSync(file, r.stdout);
  return file;
}

describe('bash', () => {
  let file: string;
  beforeAll(async () => {
    file = await script('bash');
  });

  /** What bash offers for `line` (a trailing space means: a new, empty word). Not a sync
   *  exec: the service answering `__complete` runs in this process. */
  async function complete(line: string, env?: Record<string, string>): Promise<string[]> {
    const words = line.split(' ');
    const program = [
      `source '${file}'`,
      `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})`,
      `COMP_CWORD=${words.length - 1}`,
      '"$(complete -p frameplane | sed -E "s/.* -F ([^ ]+) .*/\\1/")"',
      `printf "%s\\n" "\${COMPREPLY[@]}"`,
    ].join('\n');
    const { stdout } = await exec('bash', ['--norc', '-c', program], { env });
    return stdout.split('\n').filter(Boolean);
  }

  it('is registered for frameplane', () => {
    const out = execFileSync('bash', ['--norc', '-c', `source '${file}'; complete -p frameplane`]);
    expect(String(out).trim()).toBe('complete -F _frameplane frameplane');
  });

  it('completes commands, subcommands and options from the command tree', async () => {
    expect(await complete('frameplane fr')).toEqual(['frames']);
    expect((await complete('frameplane frames s')).sort()).toEqual([
      'scale',
      'show',
      'start',
      'status',
      'stop',
    ]);
    expect(await complete('frameplane frames domains ')).toEqual(
      expect.arrayContaining(['list', 'add', 'verify', 'remove']),
    );
    expect((await complete('frameplane orgs invitations r')).sort()).toEqual(['resend', 'revoke']);
    // Options, the command's own and the global ones, after an option and its value.
    expect(await complete('frameplane frames list -p Shop --')).toEqual(
      expect.arrayContaining(['--project', '--json', '--server', '--help']),
    );
    expect(await complete('frameplane --json spaces ')).toEqual(
      expect.arrayContaining(['list', 'create', 'rename']),
    );
    // A value comes next: nothing to offer, not the command's words.
    expect(await complete('frameplane frames list -p ')).toEqual([]);
    // An argument is not a command: `web` leaves the path at `frames show`.
    expect(await complete('frameplane frames show web --')).toContain('--project');
    expect(await complete('frameplane op')).toEqual(['open']);
    expect(await complete('frameplane open web --')).toEqual(
      expect.arrayContaining(['--project', '--print', '--json']),
    );
    expect(await complete('frameplane completion ')).toEqual(
      expect.arrayContaining(['bash', 'zsh', 'fish', '--help']),
    );
  });

  it('completes project, frame and team names from the service', async () => {
    expect(await complete('frameplane projects show S', ann)).toEqual(['Shed', 'Shop']);
    expect(await complete('frameplane frames list -p Sho', ann)).toEqual(['Shop']);
    expect(await complete('frameplane share Shop --team ', ann)).toEqual(['web-crew']);
    expect(await complete('frameplane grants w', ann)).toEqual(['web-crew']);
    expect(await complete('frameplane frames show -p Shop ', ann)).toEqual(['web']);
    expect(await complete('frameplane frames logs -p Shop -f w', ann)).toEqual(['web']);
    // The second argument names nothing: the command's words, as before.
    expect(await complete('frameplane invite web-crew ', ann)).toContain('--role');
    expect(await complete('frameplane projects show --', ann)).toContain('--json');
    // Not logged in, or the service unreachable: nothing, at once.
    const nobody = { PATH, XDG_CONFIG_HOME: mkdtempSync(join(dir, 'cfg-')) };
    expect(await complete('frameplane projects show ', nobody)).toEqual([]);
    const offline = { ...ann, FRAMEPLANE_SERVER: 'http://127.0.0.1:1' };
    expect(await complete('frameplane projects show ', offline)).toEqual([]);
  });

  it('refuses a shell it does not know (exit 2)', async () => {
    const r = await run(['completion', 'powershell'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('bash, zsh, fish');
  });
});

describe.skipIf(!has('fish'))('fish', () => {
  it('answers complete -C with the words and their descriptions', async () => {
    const file = await script('fish');
    const complete = (line: string) =>
      execFileSync('fish', ['--no-config', '-c', `source '${file}'; complete -C '${line}'`], {
        encoding: 'utf8',
      });
    expect(complete('frameplane fr')).toBe('frames\tframes: the apps of a project\n');
    const subcommands = complete('frameplane frames s').split('\n').filter(Boolean);
    expect(subcommands.map((l) => l.split('\t')[0])).toEqual([
      'scale',
      'show',
      'start',
      'status',
      'stop',
    ]);
    expect(complete('frameplane frames list -p ')).toBe('');
  });

  it('completes names from the service', async () => {
    const file = await script('fish');
    const lines = [
      'frameplane projects show S',
      'frameplane frames show -p Shop ',
      'frameplane leave ',
    ]
      .map((l) => `complete -C '${l}'`)
      .join('; ');
    const { stdout } = await exec('fish', ['--no-config', '-c', `source '${file}'; ${lines}`], {
      env: { ...ann, HOME: dir },
    });
    expect(stdout).toBe('Shed\nShop\nweb\nweb-crew\n');
  });
});

describe.skipIf(!has('zsh'))('zsh', () => {
  it('completes on TAB in an interactive zsh', async () => {
    const file = await script('zsh');
    const home = mkdtempSync(join(dir, 'zdot-'));
    writeFileSync(join(home, '.zshrc'), `autoload -U compinit && compinit -u\nsource '${file}'\n`);
    // TAB completes the one match; TAB TAB lists several (not while more keys wait: hence the
    // pauses); Ctrl-U clears the line. A name comes from the service, through __complete.
    const keys = [
      'frameplane fr\t\x15frameplane frames s\t\t',
      '\x15frameplane projects show Sho\t',
    ];
    const typed = keys.map((k) => `printf '${k}'; sleep 2`).join('; ');
    const { stdout: out } = await exec(
      'bash',
      ['-c', `(${typed}; printf '\\x15exit\\n') | script -qfec 'zsh -i' /dev/null`],
      { env: { ...ann, HOME: home, ZDOTDIR: home, TERM: 'dumb' } },
    );
    expect(out).toContain('frameplane frames ');
    expect(out).toMatch(/^scale\s+-- run this many replicas/m);
    expect(out).toMatch(/^status\s+-- a frame's status/m);
    expect(out).toContain('frameplane projects show Shop ');
  });
});

describe('__complete', () => {
  it('keeps the names 30 s, per service and user, in the config directory', async () => {
    const { t, server } = svc;
    const names = async (env: Record<string, string>) => {
      const r = await run(['__complete', 'project', 'Sh'], env);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout;
    };
    expect(await names(ann)).toBe('Shed\nShop\n');
    const shelf = await t.post('/v2/projects', {
      token: ann.FRAMEPLANE_TOKEN,
      body: { name: 'Shelf' },
    });
    expect(shelf.status, shelf.text).toBe(201);
    expect(await names(ann)).toBe('Shed\nShop\n'); // kept: the service is not asked again

    const cache = join(ann.XDG_CONFIG_HOME ?? '', 'frameplane', 'completion');
    const files = readdirSync(cache).map((f) => join(cache, f));
    for (const f of files) {
      expect(statSync(f).mode & 0o777).toBe(0o600);
      expect(readFileSync(f, 'utf8')).not.toContain(ann.FRAMEPLANE_TOKEN);
      const past = new Date(Date.now() - 31_000);
      utimesSync(f, past, past);
    }
    expect(await names(ann)).toBe('Shed\nShelf\nShop\n'); // 30 s on: asked again

    // Another user with the same config directory gets their own names, not Ann's.
    const bob = await newUser(t, 'bob');
    const bobEnv = { ...userEnv(server, bob.token), XDG_CONFIG_HOME: ann.XDG_CONFIG_HOME ?? '' };
    expect(await names(bobEnv)).toBe('');
  });
});
