// The rules of src/stop-signals.ts, one signal at a time: the first drains and exits 0; the copy
// that npm relays right after the terminal's own changes nothing; a later one exits at once.
import { describe, expect, it } from 'vitest';
import { ECHO_MS, stopHandler, type StopSignal } from '../../src/stop-signals.ts';

function harness(drain: () => Promise<void>) {
  let clock = 0;
  const exits: number[] = [];
  const drains: StopSignal[] = [];
  let abandoned = 0;
  const silent = { info() {}, warn() {}, error() {} };
  const handle = stopHandler({
    log: silent,
    now: () => clock,
    exit: (code) => {
      exits.push(code);
    },
    drain: (s) => {
      drains.push(s);
      return drain();
    },
    abandon: () => {
      abandoned++;
    },
  });
  return {
    handle,
    exits,
    drains,
    abandoned: () => abandoned,
    advance: (ms: number) => {
      clock += ms;
    },
  };
}

const never = () => new Promise<void>(() => {});
const tick = () => new Promise((r) => setImmediate(r));

describe('stop signals', () => {
  it('the first signal drains, then exits 0', async () => {
    const h = harness(async () => {});
    h.handle('SIGINT');
    await tick();
    expect(h.drains).toEqual(['SIGINT']);
    expect(h.exits).toEqual([0]);
  });

  it('a drain that fails exits 1', async () => {
    const h = harness(async () => {
      throw new Error('pool would not close');
    });
    h.handle('SIGTERM');
    await tick();
    expect(h.exits).toEqual([1]);
  });

  it('the same action delivered twice (terminal and npm) drains once and does not force', async () => {
    const h = harness(never);
    h.handle('SIGINT');
    h.advance(ECHO_MS - 1);
    h.handle('SIGINT');
    await tick();
    expect(h.drains).toEqual(['SIGINT']);
    expect(h.exits).toEqual([]);
    expect(h.abandoned()).toBe(0);
  });

  it('a second signal during the drain stops the children without waiting and exits 128 + its number', async () => {
    const h = harness(never);
    h.handle('SIGTERM');
    h.advance(ECHO_MS + 500);
    h.handle('SIGINT');
    expect(h.abandoned()).toBe(1);
    expect(h.exits).toEqual([130]);
  });
});
