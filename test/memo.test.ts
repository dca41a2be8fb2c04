// The memo switch (src/memo.ts): with MEMO=off nothing is remembered, by any memo, and the
// service answers the same from the database alone.
import { describe, expect, it } from 'vitest';
import { createMemos, MEMO_RULES } from '../src/memo.ts';
import { testApp } from './helpers/app.ts';
import { newProject, newUser } from './helpers/factories.ts';
import { defaultSpace, framePath, newFrame } from './helpers/frames.ts';

describe('memos', () => {
  it('remember when on and forget when off, whatever the options', () => {
    for (const on of [true, false]) {
      const m = createMemos(on).lru<{ n: number }>('roles', { max: 10 });
      m.set('a', { n: 1 });
      expect(m.get('a')).toEqual(on ? { n: 1 } : undefined);
      expect(m.has('a')).toBe(on);
      expect(m.size).toBe(on ? 1 : 0);
      const sized = createMemos(on).lru<string[]>('rosters', {
        maxSize: 100,
        sizeCalculation: (v) => Math.max(1, v.length),
      });
      sized.set('t', ['x', 'y']);
      expect(sized.calculatedSize).toBe(on ? 2 : 0);
    }
  });

  it('each has its rule written down', () => {
    for (const rule of Object.values(MEMO_RULES)) expect(rule).toMatch(/\(\w[\w/-]*\.ts\)$/);
  });

  it('MEMO=off: a frame read twice and a token used twice are read from the database', async () => {
    const t = await testApp({ env: { MEMO: 'off' } });
    try {
      expect(t.config.memo).toBe('off');
      const ann = await newUser(t, 'ann');
      const project = await newProject(t, ann);
      const space = await defaultSpace(t, ann, project.id);
      const frame = await newFrame(t, ann, project.id, space);
      for (let i = 0; i < 3; i++)
        expect((await t.get(framePath(frame), { token: ann.token })).status).toBe(200);
      expect(t.services.frames.rememberedFrames()).toBe(0);
      expect(t.services.revocations.known()).toBe(false);
      expect(t.services.access.remembered(ann.id, project.id)).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});
