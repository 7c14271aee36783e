// Every list of the API pages the same way ({ limit, offset }), and pages past any window.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine, SubjectHandle } from '../src/index.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { code } from './support/errors.js';

describe.each(ENGINES)('one paging shape [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let me: SubjectHandle;

  beforeAll(async () => {
    let tick = Date.parse('2026-11-01T00:00:00Z');
    t = await openTestEngine(kind, { clock: () => new Date((tick += 1000)) });
    engine = t.engine;
    me = engine.subject(`paging-${Date.now().toString(36)}`);
    await engine.subjects.create(me.id);
    for (let i = 0; i < 7; i++) {
      await me.sessions.create({ id: `s${i}` });
      await me.commitments.add({ title: `c${i}` });
    }
  });
  afterAll(() => t.close());

  it('pages sessions and commitments newest first by limit and offset', async () => {
    const ids = async (offset: number) =>
      (await me.sessions.list({ limit: 3, offset })).map((s) => s.id);
    expect(await ids(0)).toEqual(['s6', 's5', 's4']);
    expect(await ids(3)).toEqual(['s3', 's2', 's1']);
    expect(await ids(6)).toEqual(['s0']);
    expect(await ids(9)).toEqual([]);
    const titles = (await me.commitments.list({ limit: 2, offset: 5 })).map((c) => c.title);
    expect(titles).toEqual(['c1', 'c0']);
    expect(await me.probes.log({ limit: 5, offset: 3 })).toEqual([]);
    expect(await me.probes.calibrations({ limit: 5, offset: 3 })).toEqual([]);
    // negative control: without an offset, the first page
    expect((await me.sessions.list({ limit: 1 })).map((s) => s.id)).toEqual(['s6']);
  });

  it('refuses a bad limit or offset on every list, naming the field', async () => {
    const lists = {
      'sessions.list': (o: object) => me.sessions.list(o),
      'commitments.list': (o: object) => me.commitments.list(o),
      'probes.log': (o: object) => me.probes.log(o),
      'probes.calibrations': (o: object) => me.probes.calibrations(o),
      'gate.dropped': (o: object) => me.gate.dropped(o),
      'reflection.list': (o: object) => me.reflection.list(o),
    };
    for (const [name, list] of Object.entries(lists)) {
      for (const [bad, field] of [
        [{ limit: 0 }, 'limit'],
        [{ limit: 1001 }, 'limit'],
        [{ offset: -1 }, 'offset'],
        [{ offset: 1.5 }, 'offset'],
      ] as const) {
        const err = await list(bad).then(
          () => null,
          (e: unknown) => e as { code: string; data?: { field?: string } },
        );
        expect(err?.code, `${name} ${JSON.stringify(bad)}`).toBe('INVALID_ARGUMENT');
        expect(err?.data?.field, `${name} ${JSON.stringify(bad)}`).toBe(field);
      }
    }
    expect(await code(me.sessions.list({ offset: 'x' } as object))).toBe('INVALID_ARGUMENT');
  });
});
