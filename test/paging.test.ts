// Every list of the API pages the same way ({ limit, offset }), and pages past any window.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine, SubjectHandle } from '../src/index.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { code } from './support/errors.js';
import { tempDir } from './support/probe-fixtures.js';

describe.each(ENGINES)('one paging shape [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let me: SubjectHandle;
  const probeRoot = tempDir('memledger-paging-probe-');

  beforeAll(async () => {
    let tick = Date.parse('2026-11-01T00:00:00Z');
    writeFileSync(join(probeRoot.dir, 'probe.txt'), 'ok');
    t = await openTestEngine(kind, {
      clock: () => new Date((tick += 1000)),
      probes: { roots: [probeRoot.dir] },
    });
    engine = t.engine;
    me = engine.subject(`paging-${Date.now().toString(36)}`);
    await engine.subjects.create(me.id);
    for (let i = 0; i < 7; i++) {
      await me.sessions.create({ id: `s${i}` });
      await me.commitments.add({ title: `c${i}` });
    }
    await me.probes.calibrate({ instrument: 'file' });
    await me.probes.calibrate({ instrument: 'file' });
    for (const purpose of ['p0', 'p1', 'p2', 'p3', 'p4']) {
      await me.probes.run({ kind: 'file', path: 'probe.txt', mode: 'exists' }, { purpose });
    }
  });
  afterAll(async () => {
    await t.close();
    probeRoot.cleanup();
  });

  it('pages sessions and commitments newest first by limit and offset', async () => {
    const ids = async (offset: number) =>
      (await me.sessions.list({ limit: 3, offset })).map((s) => s.id);
    expect(await ids(0)).toEqual(['s6', 's5', 's4']);
    expect(await ids(3)).toEqual(['s3', 's2', 's1']);
    expect(await ids(6)).toEqual(['s0']);
    expect(await ids(9)).toEqual([]);
    const titles = (await me.commitments.list({ limit: 2, offset: 5 })).map((c) => c.title);
    expect(titles).toEqual(['c1', 'c0']);
    const purposes = async (offset: number) =>
      (await me.probes.log({ limit: 2, offset })).map((r) => r.purpose);
    expect(await purposes(0)).toEqual(['p4', 'p3']);
    expect(await purposes(3)).toEqual(['p1', 'p0']);
    expect(await purposes(5)).toEqual([]);
    const all = await me.probes.calibrations({ instrument: 'file' });
    expect(all.length).toBeGreaterThanOrEqual(2);
    const second = await me.probes.calibrations({ instrument: 'file', limit: 1, offset: 1 });
    expect(second.map((x) => x.id)).toEqual([all[1]?.id]);
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
      'summaries.list': (o: object) => me.summaries.list(o),
      'arrival.manifests': (o: object) => me.arrival.manifests(o),
      'gate.pile': (o: object) => me.gate.pile(o),
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
