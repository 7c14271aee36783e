import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  generateOwnerKey,
  loadOwnerKey,
  writeOwnerKeyFile,
  type Engine,
  type OwnerSigner,
  type SubjectHandle,
  type FactId,
} from '../src/index.js';
import { storeClient } from '../src/engine/test-access.js';
import { analyze } from '../src/rules.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { dumpStore } from './support/dump-store.js';
import { code } from './support/errors.js';
import { sharedEngines } from './support/shared-engines.js';
import { TEST_KEYS } from './support/test-keys.js';

const root = mkdtempSync(join(tmpdir(), 'memledger-recall-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe.each(ENGINES)('recall [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let me: SubjectHandle;
  let signer: OwnerSigner;
  const now = new Date('2026-11-20T10:00:00Z');
  let sessionA = '';
  let sessionB = '';
  const ids = {
    oldCity: '',
    newCity: '',
    retracted: '',
    pending: '',
    rejected: '',
    inferred: '',
    saw: '',
  };

  beforeAll(async () => {
    t = await openTestEngine(kind, { clock: () => now });
    engine = t.engine;
    me = engine.subject();
    const keyFile = join(root, `${kind}.key`);
    writeOwnerKeyFile(keyFile, generateOwnerKey('pw', TEST_KEYS).keyFile);
    signer = loadOwnerKey(keyFile, 'pw', TEST_KEYS);
    await engine.subjects.create();
    await me.owner.setKey({ publicKeyPem: signer.publicKeyPem, keyId: signer.keyId });
    sessionA = (await me.sessions.create({ id: 'rec-a' })).id;
    sessionB = (await me.sessions.create({ id: 'rec-b' })).id;
    const said = [
      'I moved to Lisbon in March and I love the tram rides.',
      'My sister Ana works night shifts at the hospital.',
      'We adopted a grey cat called Pixel last weekend.',
      'I am training for the Porto half marathon in October.',
      'My manager is Rui; he runs the payments team.',
    ];
    for (const [i, content] of said.entries()) {
      await me.turns.add({
        sessionId: sessionA,
        role: 'user',
        content,
        at: new Date(Date.UTC(2026, 2, 1 + i)),
      });
      await me.turns.add({ sessionId: sessionA, role: 'assistant', content: 'Noted.' });
    }
    await me.turns.add({
      sessionId: sessionB,
      role: 'user',
      speaker: 'Maya',
      content: 'Pixel the cat knocked over my coffee this morning.',
    });

    const propose = async (
      text: string,
      origin: 'saw' | 'inferred',
      turn: number,
      quote: string,
      key?: string,
    ): Promise<string> => {
      const r = await me.gate.propose({
        sessionId: sessionA,
        proposals: [
          {
            slot: 'what_i_know_about_user',
            text,
            origin,
            evidence: { turn, quote },
            ...(key === undefined ? {} : { key }),
          },
        ],
      });
      const id = r.proposed[0]?.id;
      if (id === undefined) throw new Error(`proposal dropped: ${JSON.stringify(r.dropped)}`);
      return id;
    };
    const approve = (id: string) =>
      me.owner.decide({ proposalId: id as FactId, decision: 'approve', signer });

    // superseded: an older home city, replaced by a newer value for the same key
    ids.oldCity = await propose(
      'User lives in Lisbon near the tram line',
      'saw',
      1,
      'I moved to Lisbon',
      'home_city',
    );
    await approve(ids.oldCity);
    ids.newCity = await propose(
      'User lives in Lisbon since March',
      'saw',
      1,
      'I moved to Lisbon in March',
      'home_city',
    );
    await approve(ids.newCity);
    // retracted through the ledger
    ids.retracted = await propose(
      'User adopted a grey cat called Pixel',
      'saw',
      5,
      'We adopted a grey cat called Pixel',
    );
    await approve(ids.retracted);
    await me.ledger.retract({
      claim: 'User adopted a grey cat called Pixel',
      factId: ids.retracted as FactId,
      signer,
      stoodOn: 'one turn',
      whyWrong: 'the cat is the neighbour’s',
      corrected: 'the neighbour adopted Pixel',
      procedure: 'ask',
      passObservation: 'the neighbour owns Pixel',
      overturnCondition: 'the user owns Pixel',
    });
    // proposed only (pending in the pile), and rejected
    ids.pending = await propose(
      'User is training for the Porto half marathon',
      'saw',
      7,
      'I am training for the Porto half marathon',
    );
    ids.rejected = await propose(
      'User manager Rui runs the payments team',
      'saw',
      9,
      'My manager is Rui; he runs the payments team',
    );
    await me.owner.decide({ proposalId: ids.rejected as FactId, decision: 'reject', signer });
    // the same words twice: observed, and inferred
    ids.inferred = await propose(
      'Ana works the night shifts at the hospital',
      'inferred',
      3,
      'My sister Ana works night shifts at the hospital',
    );
    await approve(ids.inferred);
    ids.saw = await propose(
      'Ana works night shifts at the hospital',
      'saw',
      3,
      'My sister Ana works night shifts at the hospital',
    );
    await approve(ids.saw);
  });
  afterAll(async () => {
    await t.close();
  });

  const factIds = async (query: string, includeHistory = false): Promise<string[]> =>
    (await me.recall.search(query, { k: 50, kinds: ['fact'], includeHistory })).map((i) => i.id);

  it('records a message holding a 3,000-letter run, and recalls it by that run', async () => {
    // letters in no order a compressor could fold: one term too long to index before version 3
    let x = 7;
    const run = Array.from({ length: 3_000 }, () => {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      return String.fromCharCode(97 + (x % 26));
    }).join('');
    const sub = `long-run-${kind}`;
    await engine.subjects.create(sub);
    const it2 = engine.subject(sub);
    await it2.sessions.create({ id: 'lr' });
    await it2.turns.add({ sessionId: 'lr', role: 'user', content: `the sequence is ${run} ok` });
    await it2.turns.add({ sessionId: 'lr', role: 'user', content: 'nothing else here' });
    const found = await it2.recall.search(run, { kinds: ['turn'] });
    expect(found[0]?.passport.turn).toBe(1);
    expect(found[0]?.text).toContain(run);
    // the negative control: a run that differs only in its last letter is another term
    const other = `${run.slice(0, -1)}${run.endsWith('a') ? 'b' : 'a'}`;
    expect(await it2.recall.search(other, { kinds: ['turn'] })).toEqual([]);
  });

  it('leaves out superseded, retracted, proposed and rejected facts by default', async () => {
    const live = await factIds('Lisbon tram cat Pixel Porto marathon Rui payments');
    expect(live).toContain(ids.newCity);
    for (const hidden of [ids.oldCity, ids.retracted, ids.pending, ids.rejected]) {
      expect(live).not.toContain(hidden);
    }
  });

  it('brings them back labelled with includeHistory', async () => {
    const items = await me.recall.search('Lisbon tram cat Pixel Porto marathon Rui payments', {
      k: 50,
      kinds: ['fact'],
      includeHistory: true,
    });
    const status = new Map(items.map((i) => [i.id, i.passport.status]));
    expect(status.get(ids.oldCity)).toBe('superseded');
    expect(status.get(ids.retracted)).toBe('retracted');
    expect(status.get(ids.pending)).toBe('proposed');
    expect(status.get(ids.rejected)).toBe('rejected');
    expect(status.get(ids.newCity)).toBe('active');
  });

  it('ranks primary evidence above an inference at equal relevance', async () => {
    const items = await me.recall.search('Ana night shifts hospital', { k: 5 });
    const order = items.map((i) => (i.kind === 'turn' ? 'turn' : i.id));
    expect(order.indexOf(ids.saw)).toBeGreaterThanOrEqual(0);
    expect(order.indexOf(ids.saw)).toBeLessThan(order.indexOf(ids.inferred));
    expect(order.indexOf('turn')).toBeLessThan(order.indexOf(ids.inferred));
    const inferred = items.find((i) => i.id === ids.inferred);
    expect(inferred?.passport).toMatchObject({ origin: 'inferred', primary: false });
    const saw = items.find((i) => i.id === ids.saw);
    expect(saw?.passport).toMatchObject({ origin: 'saw', primary: true, status: 'active' });
  });

  it('returns turns with their passport: session, turn number, date, role, speaker', async () => {
    const [top] = await me.recall.search('grey cat adopted', { kinds: ['turn'] });
    expect(top).toMatchObject({
      kind: 'turn',
      text: 'We adopted a grey cat called Pixel last weekend.',
      passport: {
        origin: 'turn',
        status: 'recorded',
        sessionId: sessionA,
        turn: 5,
        role: 'user',
        date: '2026-03-03T00:00:00.000Z',
      },
    });
    const scoped = await me.recall.search('Pixel cat', { session: sessionB });
    expect(scoped.length).toBeGreaterThan(0);
    expect(scoped.every((i) => i.passport.sessionId === sessionB)).toBe(true);
    expect(scoped[0]?.passport.speaker).toBe('Maya');
    // a query sharing no word with the store finds nothing
    expect(await me.recall.search('quantum chromodynamics')).toEqual([]);
  });

  it('never writes: the store is unchanged after recalls of every kind', async () => {
    const before = await dumpStore(engine);
    await me.recall.search('Lisbon cat hospital marathon');
    await me.recall.search('Pixel', { includeHistory: true, k: 200 });
    await me.recall.search('coffee morning', { session: sessionB, kinds: ['turn'] });
    await me.recall.search('When did I move to Lisbon in March 2026?');
    expect(await dumpStore(engine)).toEqual(before);
    // negative control: the dump does see a write
    await me.turns.add({ sessionId: sessionB, role: 'user', content: 'One more thing.' });
    expect(await dumpStore(engine)).not.toEqual(before);
  });

  it('keeps the index consistent with the turns on write', async () => {
    const { rows } = await storeClient(engine).query<{ bad: number }>(
      `SELECT count(*)::int AS bad FROM term_stats s
       LEFT JOIN (SELECT subject_id, term, count(*)::int AS df,
                         count(DISTINCT session_id)::int AS sdf
                  FROM turn_postings GROUP BY subject_id, term) p USING (subject_id, term)
       WHERE p.df IS DISTINCT FROM s.df OR p.sdf IS DISTINCT FROM s.sdf`,
    );
    expect(rows[0]?.bad).toBe(0);
    // each session's sums of a term, both ways (a row without postings is as wrong as a gap)
    const { rows: sums } = await storeClient(engine).query<{ bad: number; n: number }>(
      `SELECT count(*) FILTER (WHERE p.tf IS DISTINCT FROM s.tf)::int AS bad, count(*)::int AS n
       FROM session_terms s
       FULL JOIN (SELECT subject_id, term, session_id, sum(tf)::int AS tf
                  FROM turn_postings GROUP BY subject_id, term, session_id) p
         USING (subject_id, term, session_id)`,
    );
    expect(sums[0]?.bad).toBe(0);
    expect(sums[0]?.n).toBeGreaterThan(0);
    const { rows: lens } = await storeClient(engine).query<{ bad: number }>(
      `SELECT count(*)::int AS bad FROM sessions s
       WHERE s.term_len <> (SELECT coalesce(sum(cardinality(t.terms)), 0) FROM turns t
                            WHERE t.session_id = s.id)`,
    );
    expect(lens[0]?.bad).toBe(0);
    const { rows: terms } = await storeClient(engine).query<{ terms: string[] }>(
      `SELECT terms FROM turns WHERE session_id = $1 AND seq = 1`,
      [sessionB],
    );
    expect(terms[0]?.terms).toEqual([
      ...analyze('Maya'),
      ...analyze('Pixel the cat knocked over my coffee this morning.'),
    ]);
  });

  it('refuses bad input with a code', async () => {
    expect(await code(me.recall.search('   '))).toBe('EMPTY_TEXT');
    expect(await code(me.recall.search('cat', { k: 0 }))).toBe('INVALID_ARGUMENT');
    expect(await code(me.recall.search('cat', { k: 201 }))).toBe('INVALID_ARGUMENT');
    expect(await code(me.recall.search('cat', { kinds: [] }))).toBe('INVALID_ARGUMENT');
    expect(await code(me.recall.search('cat', { kinds: ['summary' as 'turn'] }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(await code(me.recall.search('cat', { session: 'nope' }))).toBe('SESSION_NOT_FOUND');
    expect(await code(me.recall.search('cat', { params: { k1: -1 } }))).toBe('INVALID_ARGUMENT');
    expect(await code(me.recall.search('cat', { params: { boostPool: 2.5 } }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(
      await code(me.recall.search('cat', { params: { nope: 1 } as unknown as { k1: number } })),
    ).toBe('INVALID_ARGUMENT');
    expect(await code(engine.subject('nobody').recall.search('cat'))).toBe('SUBJECT_NOT_FOUND');
    // another subject's session reads exactly like one that does not exist
    await engine.subjects.create('rec-other');
    expect(
      await code(engine.subject('rec-other').recall.search('cat', { session: sessionA })),
    ).toBe('SESSION_NOT_FOUND');
    expect(
      await code(me.turns.add({ sessionId: sessionB, role: 'user', content: 'x', speaker: ' ' })),
    ).toBe('INVALID_ARGUMENT');
    expect(
      await code(
        me.turns.add({
          sessionId: sessionB,
          role: 'user',
          content: 'x',
          at: new Date(now.getTime() + 60_000),
        }),
      ),
    ).toBe('INVALID_ARGUMENT');
  });
});

describe('recall CLI and LoCoMo bench', () => {
  it('recalls from the command line, as JSON and as text with receipts', async () => {
    const { runCliCaptured } = await import('./support/cli.js');
    const db = join(root, 'cli-store');
    const env = {
      MEMLEDGER_OWNER_PASSPHRASE: 'pw',
      MEMLEDGER_OWNER_KEY: join(root, 'cli-owner.key'),
    };
    // the commands share one kept engine on the store, as a long-running host does
    const engines = sharedEngines();
    onTestFinished(() => engines.close());
    const run = (...args: string[]) => runCliCaptured([...args, '--db', db], env, { engines });
    expect((await run('init')).code).toBe(0);
    const s = JSON.parse((await run('session', 'new', '--json')).stdout) as { sessionId: string };
    await run(
      'turn',
      'add',
      '--session',
      s.sessionId,
      '--role',
      'user',
      '--speaker',
      'Ola',
      '--text',
      'Is it raining in Bergen?',
    );
    await run(
      'turn',
      'add',
      '--session',
      s.sessionId,
      '--role',
      'assistant',
      '--text',
      'Yes, light rain in Bergen until evening.',
      '--tools',
      'web_search',
      '--sources',
      'https://yr.no/bergen',
    );
    const json = await run('recall', 'Is it raining in Bergen', '--json', '--k', '2');
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout) as {
      items: { kind: string; passport: { turn: number } }[];
    };
    expect(doc.items).toHaveLength(2);
    // the answer inherits its question's words, so both turns come back, each with its speaker
    const speakers = Object.fromEntries(
      doc.items.map((i) => [i.passport.turn, (i.passport as { speaker?: unknown }).speaker]),
    );
    expect(speakers).toEqual({ 1: 'Ola', 2: null });
    const text = await run('recall', 'light rain evening');
    expect(text.stdout).toContain('web_search');
    expect(text.stdout).toContain('https://yr.no/bergen');
    const none = await run('recall', 'rain', '--session', 'nope');
    expect(JSON.parse(none.stderr)).toMatchObject({ error: { code: 'SESSION_NOT_FOUND' } });
  });

  it('runs the bench on a small file and prints every metric', async () => {
    const { runCliCaptured } = await import('./support/cli.js');
    const data = join(root, 'mini-locomo.json');
    writeFileSync(
      data,
      JSON.stringify([
        {
          sample_id: 'mini-1',
          conversation: {
            speaker_a: 'Jo',
            speaker_b: 'Sam',
            session_1_date_time: '1:56 pm on 8 May, 2023',
            session_1: [
              { speaker: 'Jo', dia_id: 'D1:1', text: 'I started pottery classes on Monday.' },
              { speaker: 'Sam', dia_id: 'D1:2', text: 'Nice! What did you make?' },
              { speaker: 'Jo', dia_id: 'D1:3', text: 'A lopsided blue bowl.' },
            ],
            session_2_date_time: '10:37 am on 27 June, 2023',
            session_2: [
              {
                speaker: 'Sam',
                dia_id: 'D2:1',
                text: 'My dog Rex learned to fetch.',
                blip_caption: 'a dog with a ball',
              },
              { speaker: 'Jo', dia_id: 'D2:2', text: 'Good boy Rex!' },
            ],
          },
          qa: [
            {
              question: 'When did Jo start pottery classes?',
              answer: 'May 2023',
              evidence: ['D1:1'],
              category: 2,
            },
            {
              question: 'What did Jo make in pottery?',
              answer: 'a bowl',
              evidence: ['D1:03'],
              category: 4,
            },
            {
              question: 'What is the name of Sam’s dog?',
              answer: 'Rex',
              evidence: ['D2:1; D9:9'],
              category: 1,
            },
          ],
        },
      ]),
    );
    const r = await runCliCaptured([
      'bench',
      'locomo',
      '--data',
      data,
      '--engines',
      'pglite',
      '--json',
    ]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as {
      engines: {
        engine: string;
        turns: number;
        questions: number;
        latencyMs: { p95: number };
        metrics: {
          label: string;
          questions: number;
          turnAny: Record<string, number>;
          pairAny10: number;
        }[];
      }[];
    };
    const [report] = doc.engines;
    expect(report).toMatchObject({ engine: 'pglite', turns: 5, questions: 3 });
    const pooled = report?.metrics.find((m) => m.label === 'all categories');
    expect(pooled?.questions).toBe(3);
    expect(pooled?.turnAny['10']).toBe(1);
    expect(pooled?.pairAny10).toBe(1);

    const bad = await runCliCaptured(['bench', 'locomo', '--data', join(root, 'missing.json')]);
    expect(bad.code).not.toBe(0);
    expect(JSON.parse(bad.stderr)).toMatchObject({ error: { code: 'INVALID_ARGUMENT' } });
  });
});

const DEV_SET = join(import.meta.dirname, '../../shared/bench/locomo-dev.json');

describe('the ranking needs no particular engine', () => {
  // The dev set sits beside the work tree (../shared/bench); a clone elsewhere skips this test.
  it.skipIf(!existsSync(DEV_SET))(
    'ranks a LoCoMo conversation the same through the store on both engines and in memory (needs ../shared/bench/locomo-dev.json)',
    async () => {
      const { loadLocomo } = await import('../eval/locomo-data.js');
      const { locomoSessionId } = await import('../eval/run-locomo.js');
      const { memoryIndex } = await import('../bench/support/memory-index.js');
      const { lexicalSearch } = await import('../src/recall/lexical-search.js');
      const conv = loadLocomo(DEV_SET).find((c) => c.id === 'conv-30');
      if (conv === undefined) throw new Error('conv-30 is missing from the dev set');
      const questions = conv.questions.slice(0, 40).map((q) => q.question);
      const memory = memoryIndex(conv);
      const expected: string[][] = [];
      for (const q of questions) {
        const r = await lexicalSearch(memory, q, { limit: 10 });
        expected.push(r.map((x) => `${x.session}#${x.seq}`));
      }
      expect(expected.flat().length).toBeGreaterThan(300);
      for (const kind of ENGINES) {
        const t = await openTestEngine(kind);
        try {
          await t.engine.subjects.create(conv.id);
          const subject = t.engine.subject(conv.id);
          for (const s of conv.sessions) {
            const id = locomoSessionId(conv.id, s.number);
            await subject.sessions.create({ id });
            for (const turn of s.turns) {
              await subject.turns.add({
                sessionId: id,
                role: 'user',
                speaker: turn.speaker,
                content: turn.content,
                at: new Date(s.date.getTime() + turn.seq * 1000),
              });
            }
          }
          const got: string[][] = [];
          for (const q of questions) {
            const items = await subject.recall.search(q, { kinds: ['turn'] });
            got.push(items.map((i) => `${i.passport.sessionId}#${i.passport.turn}`));
          }
          expect(got).toEqual(expected);
        } finally {
          await t.close();
        }
      }
    },
    120_000,
  );
});
