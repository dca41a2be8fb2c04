// The service's log is written asynchronously (src/logger.ts): what was logged before the
// process exits, on an error too, is all written, and in order.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const logger = fileURLToPath(new URL('../../src/logger.ts', import.meta.url));

describe('service log', () => {
  it('writes every line logged before process.exit, in order', () => {
    const script = [
      `import { createLogger } from ${JSON.stringify(logger)};`,
      "const log = createLogger('info');",
      "for (let i = 0; i < 20000; i++) log.info({ i }, 'line');",
      "log.fatal('failed to start');",
      'process.exit(1);',
    ].join('\n');
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 },
    );
    expect(run.status).toBe(1);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(20001);
    expect(lines.slice(0, -1).every((l, i) => l.i === i)).toBe(true);
    expect(lines.at(-1)).toMatchObject({
      level: 60,
      msg: 'failed to start',
      service: 'frameplane',
    });
  });
});
