// `frameplane completion`: the scripts it prints, loaded in the real shells. bash is driven as
// its completion calls the function (COMP_WORDS, COMP_CWORD); fish answers `complete -C`; zsh
// runs interactively in a pseudo-terminal (util-linux `script`) and is sent TAB keys. zsh and
// fish are skipped where they are not installed (apt-get install zsh fish).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { run } from './run.ts';

const dir = mkdtempSync(join(tmpdir(), 'frameplane-completion-'));
const has = (shell: string) => spawnSync(shell, ['-c', 'exit 0']).status === 0;

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

  /** What bash offers for `line` (a trailing space means: a new, empty word). */
  function complete(line: string): string[] {
    const words = line.split(' ');
    const program = [
      `source '${file}'`,
      `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})`,
      `COMP_CWORD=${words.length - 1}`,
      '"$(complete -p frameplane | sed -E "s/.* -F ([^ ]+) .*/\\1/")"',
      `printf "%s\\n" "\${COMPREPLY[@]}"`,
    ].join('\n');
    const out = execFileSync('bash', ['--norc', '-c', program], { encoding: 'utf8' });
    return out.split('\n').filter(Boolean);
  }

  it('is registered for frameplane', () => {
    const out = execFileSync('bash', ['--norc', '-c', `source '${file}'; complete -p frameplane`]);
    expect(String(out).trim()).toBe('complete -F _frameplane frameplane');
  });

  it('completes commands, subcommands and options from the command tree', () => {
    expect(complete('frameplane fr')).toEqual(['frames']);
    expect(complete('frameplane frames s').sort()).toEqual([
      'scale',
      'show',
      'start',
      'status',
      'stop',
    ]);
    expect(complete('frameplane frames domains ')).toEqual(
      expect.arrayContaining(['list', 'add', 'verify', 'remove']),
    );
    expect(complete('frameplane orgs invitations r').sort()).toEqual(['resend', 'revoke']);
    // Options, the command's own and the global ones, after an option and its value.
    expect(complete('frameplane frames list -p Shop --')).toEqual(
      expect.arrayContaining(['--project', '--json', '--server', '--help']),
    );
    expect(complete('frameplane --json spaces ')).toEqual(
      expect.arrayContaining(['list', 'create', 'rename']),
    );
    // A value comes next: nothing to offer, not the command's words.
    expect(complete('frameplane frames list -p ')).toEqual([]);
    // An argument is not a command: `web` leaves the path at `frames show`.
    expect(complete('frameplane frames show web --')).toContain('--project');
    expect(complete('frameplane op')).toEqual(['open']);
    expect(complete('frameplane open web --')).toEqual(
      expect.arrayContaining(['--project', '--print', '--json']),
    );
    expect(complete('frameplane completion ')).toEqual(
      expect.arrayContaining(['bash', 'zsh', 'fish', '--help']),
    );
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
});

describe.skipIf(!has('zsh'))('zsh', () => {
  it('completes on TAB in an interactive zsh', async () => {
    const file = await script('zsh');
    const home = mkdtempSync(join(dir, 'zdot-'));
    writeFileSync(join(home, '.zshrc'), `autoload -U compinit && compinit -u\nsource '${file}'\n`);
    // TAB completes the one match; TAB TAB lists several; Ctrl-U clears the line.
    const keys = 'frameplane fr\t\x15frameplane frames s\t\t';
    const out = execFileSync(
      'bash',
      [
        '-c',
        `(printf '${keys}'; sleep 2; printf '\\x15exit\\n') | script -qfec 'zsh -i' /dev/null`,
      ],
      {
        env: { PATH: process.env.PATH ?? '', HOME: home, ZDOTDIR: home, TERM: 'dumb' },
        encoding: 'utf8',
      },
    );
    expect(out).toContain('frameplane frames ');
    expect(out).toMatch(/^scale\s+-- run this many replicas/m);
    expect(out).toMatch(/^status\s+-- a frame's status/m);
  });
});
