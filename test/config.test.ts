// Defaults that depend on the machine, and settings read from the environment (src/config.ts).
import { describe, expect, it } from 'vitest';
import { defaultSharedBuffersMb, loadConfig } from '../src/config.ts';

const GiB = 2 ** 30;

describe('the embedded PostgreSQL shared_buffers', () => {
  it.each([
    [0.5 * GiB, 128], // PostgreSQL's own default is the floor
    [1 * GiB, 128],
    [2 * GiB, 256],
    [4 * GiB, 512],
    [8 * GiB, 1024],
    [24 * GiB, 1024], // at most 1 GB: the service and the frames share the machine
  ])('with %d bytes of memory: %d MB', (memory, mb) => {
    expect(defaultSharedBuffersMb(memory)).toBe(mb);
  });

  it('EMBEDDED_SHARED_BUFFERS_MB overrides it, and a bad value is refused', () => {
    expect(loadConfig({ EMBEDDED_SHARED_BUFFERS_MB: '64' }).embeddedSharedBuffersMb).toBe(64);
    expect(loadConfig({}).embeddedSharedBuffersMb).toBe(defaultSharedBuffersMb());
    expect(() => loadConfig({ EMBEDDED_SHARED_BUFFERS_MB: '1GB' })).toThrow(
      'EMBEDDED_SHARED_BUFFERS_MB must be an integer >= 16, got "1GB"',
    );
  });
});

describe('FRAMES_ON_EXIT', () => {
  it('is auto by default, stop or keep when set, and anything else is refused', () => {
    expect(loadConfig({}).framesOnExit).toBe('auto');
    expect(loadConfig({ FRAMES_ON_EXIT: '' }).framesOnExit).toBe('auto');
    expect(loadConfig({ FRAMES_ON_EXIT: 'stop' }).framesOnExit).toBe('stop');
    expect(loadConfig({ FRAMES_ON_EXIT: 'keep' }).framesOnExit).toBe('keep');
    expect(() => loadConfig({ FRAMES_ON_EXIT: 'yes' })).toThrow(
      'FRAMES_ON_EXIT must be one of auto, stop, keep, got "yes"',
    );
  });
});
