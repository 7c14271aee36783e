/**
 * The reads an owner's review page makes: arrival manifests paged (and by surface), the dropped
 * log paged, counted and summarised per day in the subject's zone, and a seq range of a session's
 * turns. Each is scoped to its subject, and bad input is INVALID_ARGUMENT that changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine, SubjectHandle } from '../src/index.js';
import { dumpStore } from './support/dump-store.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { code } from './support/errors.js';
import { unchecked } from './support/unchecked.js';

const MINUTE = 60_000;

describe.each(ENGINES)('review reads [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let alice: SubjectHandle;
  let bob: SubjectHandle;
  let now = new Date('2026-10-21T16:00:00Z');
  const at = (iso: string): void => {
    now = new Date(iso);
  };

  beforeAll(async () => {
    t = await openTestEngine(kind, { clock: () => now, arrival: { timeZone: 'UTC' } });
    engine = t.engine;
    await engine.subjects.create('alice');
    await engine.subjects.create('bob');
    alice = engine.subject('alice');
    bob = engine.subject('bob');
  });
  afterAll(async () => {
    await t.close();
  });

  /** Every call rejects with INVALID_ARGUMENT, and the store is as it was. */
  async function refusesAll(calls: Array<[string, () => Promise<unknown>]>): Promise<void> {
    const before = await dumpStore(engine);
    const wrong: string[] = [];
    for (const [label, call] of calls) {
      const got = await code(call()).catch((err: Error) => `threw ${err.message}`);
      if (got !== 'INVALID_ARGUMENT') wrong.push(`${label} → ${got}`);
    }
    expect(wrong).toEqual([]);
    expect(await dumpStore(engine)).toEqual(before);
  }

  describe('arrival.manifests', () => {
    const aliceIds: string[] = [];
    const bobIds: string[] = [];

    beforeAll(async () => {
      at('2026-10-21T09:00:00Z');
      // all at one clock reading but two: arrival order (seq) decides, not created_at
      for (const surface of ['chat', 'wake', 'chat', 'chat', 'wake']) {
        aliceIds.push((await alice.arrival.assemble({ surface })).manifestId);
      }
      at('2026-10-21T09:05:00Z');
      for (const surface of ['chat', 'chat']) {
        bobIds.push((await bob.arrival.assemble({ surface })).manifestId);
      }
      at('2026-10-21T16:00:00Z');
    });

    it('lists the subject’s manifests newest first, with the total', async () => {
      const page = await alice.arrival.manifests();
      expect(page.total).toBe(5);
      expect(page.manifests.map((m) => m.id)).toEqual([...aliceIds].reverse());
      const newest = page.manifests[0]!;
      expect(newest).toMatchObject({ subjectId: 'alice', surface: 'wake', sessionId: null });
      expect(newest.createdAt).toBeInstanceOf(Date);
      expect(newest.blocks.length).toBeGreaterThan(0);
      expect(newest.totalChars).toBeGreaterThan(0);
    });

    it('pages by limit and offset, the total unchanged by either', async () => {
      const newestFirst = [...aliceIds].reverse();
      const pages: string[][] = [];
      for (const offset of [0, 2, 4, 5, 100]) {
        const page = await alice.arrival.manifests({ limit: 2, offset });
        expect(page.total).toBe(5);
        pages.push(page.manifests.map((m) => m.id));
      }
      expect(pages).toEqual([
        newestFirst.slice(0, 2),
        newestFirst.slice(2, 4),
        [newestFirst[4]],
        [],
        [],
      ]);
      expect((await alice.arrival.manifests({ limit: 1 })).manifests.map((m) => m.id)).toEqual([
        newestFirst[0],
      ]);
      expect((await alice.arrival.manifests({ limit: 1000 })).manifests).toHaveLength(5);
    });

    it('filters by surface, the total counting only that surface', async () => {
      const chat = await alice.arrival.manifests({ surface: 'chat' });
      expect(chat.total).toBe(3);
      expect(chat.manifests.map((m) => m.id)).toEqual([aliceIds[3], aliceIds[2], aliceIds[0]]);
      const wake = await alice.arrival.manifests({ surface: 'wake', limit: 1, offset: 1 });
      expect(wake).toMatchObject({ total: 2 });
      expect(wake.manifests.map((m) => m.id)).toEqual([aliceIds[1]]);
      expect(await alice.arrival.manifests({ surface: 'never' })).toEqual({
        total: 0,
        manifests: [],
      });
    });

    it('never shows another subject’s manifests', async () => {
      const b = await bob.arrival.manifests();
      expect(b.total).toBe(2);
      expect(b.manifests.map((m) => m.id)).toEqual([...bobIds].reverse());
      expect(b.manifests.every((m) => m.subjectId === 'bob')).toBe(true);
      const a = await alice.arrival.manifests({ surface: 'chat', limit: 1000 });
      expect(a.manifests.some((m) => bobIds.includes(m.id))).toBe(false);
    });

    it('refuses a bad page or surface with INVALID_ARGUMENT, changing nothing', async () => {
      const m = (o: unknown) => () => alice.arrival.manifests(o as never);
      await refusesAll([
        ['limit 0', m({ limit: 0 })],
        ['limit -1', m({ limit: -1 })],
        ['limit 1001', m({ limit: 1001 })],
        ['limit 1.5', m({ limit: 1.5 })],
        ['limit "2"', m({ limit: '2' })],
        ['limit NaN', m({ limit: Number.NaN })],
        ['offset -1', m({ offset: -1 })],
        ['offset 0.5', m({ offset: 0.5 })],
        ['offset "1"', m({ offset: '1' })],
        ['surface "Not A Surface"', m({ surface: 'Not A Surface' })],
        ['surface 5', m({ surface: 5 })],
        ['options null', m(null)],
      ]);
    });
  });

  describe('gate.dropped, droppedCount, droppedByDay', () => {
    let aliceSession: string;
    let bobSession: string;

    const unknownSlot = {
      slot: 'no_such_slot',
      text: 'The user likes tea.',
      origin: 'saw',
      evidence: { turn: 1, quote: 'I like tea' },
    };
    const quoteNotFound = {
      slot: 'what_i_know_about_user',
      text: 'The user likes coffee.',
      origin: 'saw',
      evidence: { turn: 1, quote: 'I adore coffee' },
    };

    /** Proposals that are all dropped, at `iso` on the engine clock. */
    async function dropAt(
      who: SubjectHandle,
      sessionId: string,
      iso: string,
      proposals: unknown[],
    ): Promise<void> {
      at(iso);
      const r = await who.gate.propose({ sessionId, proposals: unchecked(proposals) });
      expect(r.proposed).toEqual([]);
      expect(r.dropped).toHaveLength(proposals.length);
    }

    beforeAll(async () => {
      at('2026-08-01T12:00:00Z');
      aliceSession = (await alice.sessions.create()).id;
      await alice.turns.add({ sessionId: aliceSession, role: 'user', content: 'I like tea.' });
      bobSession = (await bob.sessions.create()).id;
      await bob.turns.add({ sessionId: bobSession, role: 'user', content: 'I like tea.' });
      // New York is UTC-4 in October 2026: 02:00Z on the 21st is 22:00 on the 20th there
      await alice.arrival.setTimeZone('America/New_York');

      await dropAt(alice, aliceSession, '2026-09-01T12:00:00Z', [unknownSlot]);
      await dropAt(alice, aliceSession, '2026-10-20T15:00:00Z', [
        unknownSlot,
        unknownSlot,
        quoteNotFound,
      ]);
      await dropAt(alice, aliceSession, '2026-10-21T02:00:00Z', [quoteNotFound]);
      await dropAt(alice, aliceSession, '2026-10-21T15:00:00Z', [unknownSlot]);
      // bob drops on the same days; none of it may show in alice's counts
      await dropAt(bob, bobSession, '2026-10-20T15:00:00Z', [quoteNotFound, quoteNotFound]);
      await dropAt(bob, bobSession, '2026-10-21T15:00:00Z', [unknownSlot]);
      at('2026-10-21T16:00:00Z');
    });

    it('counts the subject’s dropped log, and only its own', async () => {
      expect(await alice.gate.droppedCount()).toBe(6);
      expect(await bob.gate.droppedCount()).toBe(3);
    });

    it('pages the log newest first; the pages together are the whole log', async () => {
      const all = await alice.gate.dropped();
      expect(all).toHaveLength(6);
      const times = all.map((d) => d.droppedAt.getTime());
      expect([...times].sort((x, y) => y - x)).toEqual(times);
      const paged: string[] = [];
      for (let offset = 0; offset < 8; offset += 2) {
        paged.push(...(await alice.gate.dropped({ limit: 2, offset })).map((d) => d.id));
      }
      expect(paged).toEqual(all.map((d) => d.id));
      expect(await alice.gate.dropped({ offset: 6 })).toEqual([]);
      expect((await alice.gate.dropped({ limit: 1, offset: 5 })).map((d) => d.id)).toEqual([
        all[5]?.id,
      ]);
      expect(all[0]).toMatchObject({ code: 'UNKNOWN_SLOT', sessionId: aliceSession });
      const bobIds = (await bob.gate.dropped()).map((d) => d.id);
      expect(bobIds).toHaveLength(3);
      expect(all.some((d) => bobIds.includes(d.id))).toBe(false);
    });

    it('counts drops per code per day in the subject’s zone, oldest day first', async () => {
      expect(await alice.gate.droppedByDay()).toEqual([
        { day: '2026-10-20', code: 'QUOTE_NOT_FOUND', count: 2 },
        { day: '2026-10-20', code: 'UNKNOWN_SLOT', count: 2 },
        { day: '2026-10-21', code: 'UNKNOWN_SLOT', count: 1 },
      ]);
      expect(await bob.gate.droppedByDay({ days: 2 })).toEqual([
        { day: '2026-10-20', code: 'QUOTE_NOT_FOUND', count: 2 },
        { day: '2026-10-21', code: 'UNKNOWN_SLOT', count: 1 },
      ]);
    });

    it('covers exactly the last `days` days, today included', async () => {
      expect(await alice.gate.droppedByDay({ days: 1 })).toEqual([
        { day: '2026-10-21', code: 'UNKNOWN_SLOT', count: 1 },
      ]);
      expect(await alice.gate.droppedByDay({ days: 2 })).toEqual(
        await alice.gate.droppedByDay({ days: 14 }),
      );
      // 2026-09-01 is the 51st day back from 2026-10-21 (counting both)
      expect((await alice.gate.droppedByDay({ days: 50 })).map((d) => d.day)).not.toContain(
        '2026-09-01',
      );
      expect((await alice.gate.droppedByDay({ days: 51 }))[0]).toEqual({
        day: '2026-09-01',
        code: 'UNKNOWN_SLOT',
        count: 1,
      });
      expect(await alice.gate.droppedByDay({ days: 366 })).toHaveLength(4);
      // a day later, the 20th falls out of a one-day window and today has none
      at('2026-10-22T16:00:00Z');
      try {
        expect(await alice.gate.droppedByDay({ days: 1 })).toEqual([]);
        expect((await alice.gate.droppedByDay({ days: 2 })).map((d) => d.day)).toEqual([
          '2026-10-21',
        ]);
      } finally {
        at('2026-10-21T16:00:00Z');
      }
    });

    it('reads the day in the subject’s zone: in UTC the late drop falls on the 21st', async () => {
      await alice.arrival.setTimeZone(null); // the engine's default, UTC here
      try {
        expect(await alice.gate.droppedByDay({ days: 2 })).toEqual([
          { day: '2026-10-20', code: 'QUOTE_NOT_FOUND', count: 1 },
          { day: '2026-10-20', code: 'UNKNOWN_SLOT', count: 2 },
          { day: '2026-10-21', code: 'QUOTE_NOT_FOUND', count: 1 },
          { day: '2026-10-21', code: 'UNKNOWN_SLOT', count: 1 },
        ]);
      } finally {
        await alice.arrival.setTimeZone('America/New_York');
      }
    });

    it('refuses a bad page or window with INVALID_ARGUMENT, changing nothing', async () => {
      const d = (o: unknown) => () => alice.gate.dropped(o as never);
      const byDay = (o: unknown) => () => alice.gate.droppedByDay(o as never);
      await refusesAll([
        ['dropped limit 0', d({ limit: 0 })],
        ['dropped limit 1001', d({ limit: 1001 })],
        ['dropped limit 2.5', d({ limit: 2.5 })],
        ['dropped offset -1', d({ offset: -1 })],
        ['dropped offset 1.5', d({ offset: 1.5 })],
        ['dropped offset "2"', d({ offset: '2' })],
        ['droppedByDay days 0', byDay({ days: 0 })],
        ['droppedByDay days -3', byDay({ days: -3 })],
        ['droppedByDay days 367', byDay({ days: 367 })],
        ['droppedByDay days 1.5', byDay({ days: 1.5 })],
        ['droppedByDay days "7"', byDay({ days: '7' })],
        ['droppedByDay options 7', byDay(7)],
      ]);
    });
  });

  describe('gate.pile pages and gate.pileCount', () => {
    it('pages the pile oldest first, counts it, and never shows another subject’s', async () => {
      at('2026-10-22T09:00:00Z');
      const session = await alice.sessions.create();
      await alice.turns.add({
        sessionId: session.id,
        role: 'user',
        content: 'I drink tea, I run on Sundays, I read at night and I cook on Fridays.',
      });
      const texts = ['drinks tea', 'runs on Sundays', 'reads at night', 'cooks on Fridays'];
      const ids: string[] = [];
      for (const [i, t] of texts.entries()) {
        now = new Date(now.getTime() + MINUTE);
        const quote = ['I drink tea', 'I run on Sundays', 'I read at night', 'I cook on Fridays'][
          i
        ];
        const r = await alice.gate.propose({
          sessionId: session.id,
          proposals: [
            {
              slot: 'stances',
              text: `The user ${t}.`,
              origin: 'saw',
              evidence: { turn: 1, quote: quote ?? '' },
            },
          ],
        });
        ids.push(r.proposed[0]?.id ?? '');
      }
      const before = (await alice.gate.pile()).map((p) => p.fact.id);
      expect(before.slice(-4)).toEqual(ids);
      expect(await alice.gate.pileCount()).toBe(before.length);
      const page = await alice.gate.pile({ limit: 2, offset: before.length - 3 });
      expect(page.map((p) => p.fact.id)).toEqual(ids.slice(1, 3));
      expect(page[0]?.citedTurn?.content).toContain('I drink tea');
      expect(await alice.gate.pile({ offset: before.length })).toEqual([]);
      expect(await bob.gate.pileCount()).toBe((await bob.gate.pile()).length);
      expect((await bob.gate.pile()).map((p) => p.fact.id)).not.toContain(ids[0]);
      await refusesAll([
        ['limit 0', () => alice.gate.pile({ limit: 0 })],
        ['limit 1001', () => alice.gate.pile({ limit: 1001 })],
        ['offset -1', () => alice.gate.pile({ offset: -1 })],
        ['limit 1.5', () => alice.gate.pile({ limit: 1.5 })],
      ]);
      at('2026-10-21T16:00:00Z');
    });
  });

  describe('history.turns from and to', () => {
    const SESSION = 'shared-id';

    beforeAll(async () => {
      at('2026-10-21T10:00:00Z');
      await alice.sessions.create({ id: SESSION });
      for (let i = 1; i <= 6; i += 1) {
        now = new Date(now.getTime() + MINUTE);
        await alice.turns.add({
          sessionId: SESSION,
          role: i % 2 === 1 ? 'user' : 'assistant',
          content: `alice turn ${i}`,
        });
      }
      // the same session id, another subject: its turns share seqs 1 and 2, never rows
      await bob.sessions.create({ id: SESSION });
      await bob.turns.add({ sessionId: SESSION, role: 'user', content: 'bob turn 1' });
      await bob.turns.add({ sessionId: SESSION, role: 'assistant', content: 'bob turn 2' });
      at('2026-10-21T16:00:00Z');
    });

    const seqs = async (options: { from?: number; to?: number }) =>
      (await alice.history.turns(SESSION, options)).map((turn) => turn.seq);

    it('reads an inclusive range of seqs', async () => {
      expect(await seqs({ from: 2, to: 4 })).toEqual([2, 3, 4]);
      expect(await seqs({ from: 3, to: 3 })).toEqual([3]);
      expect(await seqs({ from: 5 })).toEqual([5, 6]);
      expect(await seqs({ to: 2 })).toEqual([1, 2]);
      expect(await seqs({ from: 1, to: 6 })).toEqual([1, 2, 3, 4, 5, 6]);
      expect(await seqs({ from: 6, to: 100 })).toEqual([6]);
      expect(await seqs({ from: 7 })).toEqual([]);
      expect(await seqs({})).toEqual([1, 2, 3, 4, 5, 6]);
      const [turn] = await alice.history.turns(SESSION, { from: 4, to: 4 });
      expect(turn).toMatchObject({
        subjectId: 'alice',
        content: 'alice turn 4',
        role: 'assistant',
      });
    });

    it('applies the range to render and messages too', async () => {
      const text = await alice.history.render(SESSION, { from: 2, to: 3 });
      expect(text).toContain('alice turn 2');
      expect(text).toContain('alice turn 3');
      expect(text).not.toContain('alice turn 1');
      expect(text).not.toContain('alice turn 4');
      // the assistant turn's receipt comes as a system message beside it
      const messages = await alice.history.messages(SESSION, { from: 5 });
      expect(messages.filter((m) => m.role !== 'system').map((m) => m.content)).toEqual([
        'alice turn 5',
        'alice turn 6',
      ]);
    });

    it('never reads another subject’s turns', async () => {
      const b = await bob.history.turns(SESSION, { from: 1, to: 6 });
      expect(b.map((turn) => [turn.seq, turn.content])).toEqual([
        [1, 'bob turn 1'],
        [2, 'bob turn 2'],
      ]);
      expect(await code(bob.history.turns('no-such-session', { from: 1, to: 2 }))).toBe(
        'SESSION_NOT_FOUND',
      );
    });

    it('refuses a bad range with INVALID_ARGUMENT, changing nothing', async () => {
      const h = (o: unknown) => () => alice.history.turns(SESSION, o as never);
      await refusesAll([
        ['from 0', h({ from: 0 })],
        ['to 0', h({ to: 0 })],
        ['from -1', h({ from: -1 })],
        ['from 1.5', h({ from: 1.5 })],
        ['to 2.5', h({ to: 2.5 })],
        ['from "2"', h({ from: '2' })],
        ['from 4 to 2', h({ from: 4, to: 2 })],
        ['last 2 with from 1', h({ last: 2, from: 1 })],
        ['last 2 with to 3', h({ last: 2, to: 3 })],
        ['render from 3 to 1', () => alice.history.render(SESSION, { from: 3, to: 1 })],
        ['messages from 0', () => alice.history.messages(SESSION, { from: 0 })],
      ]);
    });
  });
});
