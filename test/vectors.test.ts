// Issue 6 item 3: optional vectors, stored per model, fused with the lexical ranking; recall
// still never writes. The embedder is a local fake speaking OpenAI's protocol over HTTP.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  generateOwnerKey,
  loadOwnerKey,
  openAiEmbedder,
  writeOwnerKeyFile,
  type Engine,
  type OwnerSigner,
  type SubjectHandle,
  type FactId,
} from '../src/index.js';
import { storeClient } from '../src/engine/test-access.js';
import { nearestTurnsByIndexSql, VectorSql } from '../src/store/vector-sql.js';
import { withSessionMaxSim } from '../src/recall/vector-rank.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { code } from './support/errors.js';
import {
  conceptVector,
  startFakeEmbeddings,
  type FakeEmbeddings,
} from './support/fake-embeddings.js';
import { dumpStore } from './support/dump-store.js';
import { TEST_KEYS } from './support/test-keys.js';

const root = mkdtempSync(join(tmpdir(), 'memledger-vectors-'));
let fake: FakeEmbeddings;
beforeAll(async () => {
  fake = await startFakeEmbeddings();
});
afterAll(async () => {
  await fake.close();
  rmSync(root, { recursive: true, force: true });
});

const MODEL = 'fake-concepts';

describe.each(ENGINES)('vector recall [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let me: SubjectHandle;
  let signer: OwnerSigner;
  let session = '';
  const ids = { liveFact: '', retractedFact: '' };

  beforeAll(async () => {
    t = await openTestEngine(kind, {
      embedder: openAiEmbedder({ baseUrl: fake.baseUrl, model: MODEL }),
    });
    engine = t.engine;
    me = engine.subject();
    fake.mode = 'ok';
    fake.dims = 24;
    const keyFile = join(root, `${kind}.key`);
    writeOwnerKeyFile(keyFile, generateOwnerKey('pw', TEST_KEYS).keyFile);
    signer = loadOwnerKey(keyFile, 'pw', TEST_KEYS);
    await engine.subjects.create();
    await me.owner.setKey({ publicKeyPem: signer.publicKeyPem, keyId: signer.keyId });
    session = (await me.sessions.create({ id: 'vec-a' })).id;
    for (const content of [
      'We brought home a puppy named Biscuit last week.',
      'My sedan broke down on the highway again.',
      'I played guitar at the open mic on Friday.',
      'Booked a trip to see the Eiffel tower in spring.',
      'Biscuit chewed my slippers.',
    ]) {
      await me.turns.add({ sessionId: session, role: 'user', content, speaker: 'Noor' });
    }
    const propose = async (text: string, turn: number, quote: string): Promise<string> => {
      const r = await me.gate.propose({
        sessionId: session,
        proposals: [
          { slot: 'what_i_know_about_user', text, origin: 'saw', evidence: { turn, quote } },
        ],
      });
      const id = r.proposed[0]?.id;
      if (id === undefined) throw new Error(`dropped: ${JSON.stringify(r.dropped)}`);
      await me.owner.decide({ proposalId: id, decision: 'approve', signer });
      return id;
    };
    ids.liveFact = await propose('User has a labrador puppy', 1, 'a puppy named Biscuit');
    ids.retractedFact = await propose(
      'User owns a pup from a shelter',
      1,
      'We brought home a puppy',
    );
    await me.ledger.retract({
      claim: 'User owns a pup from a shelter',
      factId: ids.retractedFact as FactId,
      signer,
      stoodOn: 'one turn',
      whyWrong: 'the puppy came from a breeder',
      corrected: 'the puppy came from a breeder',
      procedure: 'ask',
      passObservation: 'a breeder’s receipt',
      overturnCondition: 'a shelter’s adoption form',
    });
  });
  afterAll(async () => {
    await t.close();
  });

  const turnTexts = async (query: string, vectors?: boolean): Promise<string[]> =>
    (
      await me.recall.search(query, {
        kinds: ['turn'],
        k: 3,
        ...(vectors === undefined ? {} : { vectors }),
      })
    ).map((i) => i.text);

  it('finds nothing by meaning before anything is embedded (recall does not embed)', async () => {
    const before = await dumpStore(engine);
    // "dog" shares no word with any turn: only a vector can find the puppy
    expect(await turnTexts('Tell me about the dog')).not.toContain(
      'We brought home a puppy named Biscuit last week.',
    );
    expect(await dumpStore(engine)).toEqual(before);
  });

  it('embedPending stores one vector per turn and fact, once', async () => {
    fake.inputs.length = 0;
    const first = await me.vectors.embedPending();
    expect(first).toEqual({ model: MODEL, turns: 5, facts: 2, remaining: false });
    // speaker first, as recall's lexical index reads turns
    expect(fake.inputs).toContain('Noor: My sedan broke down on the highway again.');
    expect(await me.vectors.embedPending()).toEqual({
      model: MODEL,
      turns: 0,
      facts: 0,
      remaining: false,
    });
    const { rows } = await storeClient(engine).query<{ n: number }>(
      'SELECT (SELECT count(*) FROM turn_vectors)::int + (SELECT count(*) FROM fact_vectors)::int AS n',
    );
    expect(rows[0]?.n).toBe(7);
  });

  it('a limit leaves the rest pending, and says so', async () => {
    await me.turns.add({
      sessionId: session,
      role: 'user',
      content: 'The vet said the pup is fine.',
    });
    await me.turns.add({ sessionId: session, role: 'user', content: 'Traffic was awful.' });
    expect(await me.vectors.embedPending({ limit: 1 })).toMatchObject({
      turns: 1,
      remaining: true,
    });
    expect(await me.vectors.embedPending()).toMatchObject({ turns: 1, facts: 0, remaining: false });
    // one text per batch: the walk goes on from the last turn it embedded, in two sessions
    const other = await me.sessions.create({ id: 'vec-0' });
    for (const content of ['First of three.', 'Second of three.']) {
      await me.turns.add({ sessionId: other.id, role: 'user', content });
    }
    await me.turns.add({ sessionId: session, role: 'user', content: 'Third of three.' });
    expect(await me.vectors.embedPending({ batchSize: 1 })).toMatchObject({
      turns: 3,
      facts: 0,
      remaining: false,
    });
  });

  it('ranks by meaning once embedded, and not with vectors off (negative control)', async () => {
    expect((await turnTexts('Tell me about the dog'))[0]).toMatch(
      /puppy named Biscuit|pup is fine/,
    );
    expect(await turnTexts('Tell me about the dog', false)).not.toContain(
      'We brought home a puppy named Biscuit last week.',
    );
    expect((await turnTexts('any trouble with the automobile?'))[0]).toBe(
      'My sedan broke down on the highway again.',
    );
  });

  it('ranks a turn by its session’s best match too (max-sim), and not without one (negative control)', async () => {
    // two identical river turns; session vec-z also holds a close match for "dog"
    const sub = `maxsim-${kind}`;
    await engine.subjects.create(sub);
    const it2 = engine.subject(sub);
    await it2.sessions.create({ id: 'vec-b' });
    await it2.sessions.create({ id: 'vec-z' });
    await it2.turns.add({ sessionId: 'vec-b', role: 'user', content: 'we walked by the river' });
    await it2.turns.add({ sessionId: 'vec-z', role: 'user', content: 'we walked by the river' });
    const dense = { kinds: ['turn' as const], params: { vectorWeight: 100 } };
    const order = async () =>
      (await it2.recall.search('dog river walk', dense)).map(
        (i) => `${i.passport.sessionId}#${i.passport.turn}`,
      );
    await it2.vectors.embedPending();
    // without a session mate, equal turns keep the tie order (session id)
    expect((await order()).slice(0, 2)).toEqual(['vec-b#1', 'vec-z#1']);
    await it2.turns.add({ sessionId: 'vec-z', role: 'user', content: 'my labrador loves it' });
    await it2.vectors.embedPending();
    expect(await order()).toEqual(['vec-z#2', 'vec-z#1', 'vec-b#1']);
    expect(
      withSessionMaxSim([
        { session: 'a', seq: 1, similarity: 0.5 },
        { session: 'b', seq: 1, similarity: 0.5 },
        { session: 'b', seq: 2, similarity: 0.9 },
      ]).map((n) => [n.session, n.seq, n.score]),
    ).toEqual([
      ['b', 2, 0.9],
      ['b', 1, 0.7],
      ['a', 1, 0.5],
    ]);
  });

  it('keeps passports, filters and order: retracted facts only with includeHistory', async () => {
    const live = await me.recall.search('which dog does the user have', { kinds: ['fact'], k: 10 });
    expect(live.map((i) => i.id)).toContain(ids.liveFact);
    expect(live.map((i) => i.id)).not.toContain(ids.retractedFact);
    const all = await me.recall.search('which dog does the user have', {
      kinds: ['fact'],
      k: 10,
      includeHistory: true,
    });
    const retracted = all.find((i) => i.id === ids.retractedFact);
    expect(retracted?.passport.status).toBe('retracted');
    // the session filter holds for the vector lists too: no dog in session vec-0
    const other = await me.sessions.create({ id: 'vec-other' });
    await me.turns.add({ sessionId: other.id, role: 'user', content: 'Paris in spring.' });
    await me.vectors.embedPending();
    const scoped = await me.recall.search('dog', { kinds: ['turn'], session: other.id });
    expect(scoped.map((i) => i.passport.sessionId)).toEqual([]);
    expect(
      (await me.recall.search('france', { kinds: ['turn'], session: other.id })).map((i) => i.text),
    ).toEqual(['Paris in spring.']);
    const turn = (await me.recall.search('dog', { kinds: ['turn'], k: 1 }))[0];
    expect(turn?.passport).toMatchObject({ origin: 'turn', primary: true, sessionId: session });
    expect(turn?.passport.turn).toBeGreaterThan(0);
  });

  it('never writes, with vectors on', async () => {
    const before = await dumpStore(engine);
    await me.recall.search('dog automobile guitar', { includeHistory: true, k: 20 });
    await me.recall.search('Biscuit', { session, kinds: ['fact'] });
    expect(await dumpStore(engine)).toEqual(before);
  });

  it('a forgotten turn is not pending: embedding goes on after a forget, and finishes', async () => {
    const s = (await me.sessions.create()).id;
    await me.turns.add({ sessionId: s, role: 'user', content: 'My puppy is called Pretzel.' });
    await me.turns.add({ sessionId: s, role: 'user', content: 'I drive a small truck.' });
    await me.owner.forget({ scope: { kind: 'turn', session: s, seq: 1 }, signer });
    // the tombstone has no text: embedding it failed (a zero vector) and it stayed pending
    const done = await me.vectors.embedPending();
    expect(done).toMatchObject({ turns: 1, remaining: false });
    expect(await me.vectors.embedPending()).toMatchObject({ turns: 0, facts: 0, remaining: false });
  });

  it('pgvector and plain SQL give the same neighbours', async () => {
    const sql = new VectorSql(storeClient(engine), 'owner', MODEL);
    const q = conceptVector('my dog and my car');
    const norm = Math.hypot(...q);
    const unit = q.map((x) => x / norm);
    const plain = await sql.nearestTurns(unit, null, 3, 'plain');
    expect(plain).toHaveLength(3);
    expect(plain.every((n, i) => i === 0 || (plain[i - 1]?.similarity ?? 0) >= n.similarity)).toBe(
      true,
    );
    if (storeClient(engine).capabilities.vectorType) {
      const pgv = await sql.nearestTurns(unit, null, 3, 'pgvector');
      expect(pgv.map((n) => `${n.session}#${n.seq}`)).toEqual(
        plain.map((n) => `${n.session}#${n.seq}`),
      );
      pgv.forEach((n, i) => expect(n.similarity).toBeCloseTo(plain[i]?.similarity ?? -1, 5));
    }
    if (kind === 'pglite') expect(storeClient(engine).capabilities.vectorType).toBe(true);
  });

  it('with pgvector, embedPending made an HNSW index per table that the search can use', async () => {
    const { rows } = await storeClient(engine).query<{ name: string }>(
      `SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema()
         AND indexname LIKE '%hnsw%' ORDER BY 1`,
    );
    if (!storeClient(engine).capabilities.vectorType) {
      // negative control: no pgvector, no index (the PostgreSQL server here has no pgvector)
      expect(rows).toEqual([]);
      return;
    }
    expect(rows.map((r) => r.name)).toEqual(['fact_vectors_hnsw_24', 'turn_vectors_hnsw_24']);
    const unit = conceptVector('my dog');
    const norm = Math.hypot(...unit);
    const q = `[${unit.map((x) => x / norm).join(',')}]`;
    const plan = await storeClient(engine).transaction(async (tx) => {
      // a table this small is cheaper to scan and sort: forbid that, to see the index is usable
      await tx.exec('SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off');
      const r = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${nearestTurnsByIndexSql(24)}`, [
        'owner',
        MODEL,
        24,
        q,
        3,
        null,
      ]);
      const sql = new VectorSql(tx, 'owner', MODEL);
      const unitQuery = unit.map((x) => x / norm);
      return {
        text: r.rows.map((x) => x['QUERY PLAN']).join('\n'),
        byIndex: await sql.nearestTurns(unitQuery, null, 3, 'pgvector'),
        exact: await sql.nearestTurns(unitQuery, null, 3, 'plain'),
      };
    });
    expect(plan.text, plan.text).toContain('turn_vectors_hnsw_24');
    // on a graph this small the approximate search is exact
    expect(plan.byIndex.map((n) => n.seq)).toEqual(plan.exact.map((n) => n.seq));
  });

  it('refuses a model whose vectors changed length, storing nothing', async () => {
    await me.turns.add({ sessionId: session, role: 'user', content: 'New words to embed.' });
    fake.dims = 16;
    try {
      const before = await dumpStore(engine);
      expect(await code(me.vectors.embedPending())).toBe('EMBEDDER_FAILED');
      expect(await code(me.recall.search('dog'))).toBe('EMBEDDER_FAILED');
      expect(await dumpStore(engine)).toEqual(before);
    } finally {
      fake.dims = 24;
    }
    expect(await me.vectors.embedPending()).toMatchObject({ turns: 1, remaining: false });
  });

  it('a failing or lying embedder is an error, and stores nothing', async () => {
    await me.turns.add({ sessionId: session, role: 'user', content: 'One more turn.' });
    const before = await dumpStore(engine);
    for (const mode of ['error', 'zero', 'short'] as const) {
      fake.mode = mode;
      try {
        expect(await code(me.vectors.embedPending())).toBe('EMBEDDER_FAILED');
        expect(await code(me.recall.search('dog'))).toBe('EMBEDDER_FAILED');
      } finally {
        fake.mode = 'ok';
      }
    }
    expect(await dumpStore(engine)).toEqual(before);
    // lexical recall does not need the embedder
    expect(await turnTexts('Biscuit slippers', false)).toContain('Biscuit chewed my slippers.');
  });

  it('bad input changes nothing', async () => {
    await me.turns.add({ sessionId: session, role: 'user', content: 'Pending, unembedded.' });
    const before = await dumpStore(engine);
    expect(await code(me.vectors.embedPending({ limit: 0 }))).toBe('INVALID_ARGUMENT');
    expect(await code(me.vectors.embedPending({ batchSize: 1.5 }))).toBe('INVALID_ARGUMENT');
    expect(await code(engine.subject('nobody').vectors.embedPending())).toBe('SUBJECT_NOT_FOUND');
    expect(await code(me.recall.search('dog', { vectors: 'yes' as unknown as boolean }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(await dumpStore(engine)).toEqual(before);
    await me.vectors.embedPending();
  });

  it('names the text an embedder refuses, and keeps the others of its batch', async () => {
    for (const content of ['Good one.', 'POISON here.', 'Another good one.']) {
      await me.turns.add({ sessionId: session, role: 'user', content });
    }
    fake.poison = 'POISON';
    try {
      const err = await me.vectors.embedPending().then(
        () => null,
        (e: unknown) => e as Error & { code?: string },
      );
      expect(err?.code).toBe('EMBEDDER_FAILED');
      expect(err?.message).toMatch(/^turn vec-a#\d+ could not be embedded \(1 stored before it\)/);
    } finally {
      fake.poison = null;
    }
    expect(await me.vectors.embedPending()).toMatchObject({ turns: 2, remaining: false });
  });
});

describe('without an embedder', () => {
  it('embedPending and recall({ vectors: true }) say NO_EMBEDDER; recall stays lexical', async () => {
    const t = await openTestEngine('pglite');
    try {
      await t.engine.subjects.create();
      const me = t.engine.subject();
      const s = await me.sessions.create();
      await me.turns.add({
        sessionId: s.id,
        role: 'user',
        content: 'A puppy named Biscuit.',
      });
      expect(await code(me.vectors.embedPending())).toBe('NO_EMBEDDER');
      expect(await code(me.recall.search('puppy', { vectors: true }))).toBe('NO_EMBEDDER');
      expect((await me.recall.search('puppy')).map((i) => i.text)).toEqual([
        'A puppy named Biscuit.',
      ]);
    } finally {
      await t.close();
    }
  });
});

describe('embed and recall from the command line', () => {
  it('embeds with a server named by flags or environment, and recalls by meaning', async () => {
    const { runCliCaptured } = await import('./support/cli.js');
    const { sharedEngines } = await import('./support/shared-engines.js');
    const db = join(root, 'cli-store');
    const owner = {
      MEMLEDGER_OWNER_PASSPHRASE: 'pw',
      MEMLEDGER_OWNER_KEY: join(root, 'cli-owner.key'),
    };
    const env = { MEMLEDGER_EMBEDDER_URL: fake.baseUrl, MEMLEDGER_EMBEDDER_MODEL: MODEL };
    // commands share one kept engine on the store, as a long-running host does (one with an
    // embedder gets an engine of its own)
    const engines = sharedEngines();
    onTestFinished(() => engines.close());
    const run = (args: string[], e: Record<string, string> = env) =>
      runCliCaptured([...args, '--db', db], { ...owner, ...e }, { engines });
    expect((await run(['init'])).code).toBe(0);
    const s = JSON.parse((await run(['session', 'new', '--json'])).stdout) as {
      sessionId: string;
    };
    for (const text of ['We adopted a puppy in May.', 'The sedan needs new tyres.']) {
      await run(['turn', 'add', '--session', s.sessionId, '--role', 'user', '--text', text]);
    }
    // no embedder anywhere: embed refuses, recall is lexical and finds no "dog"
    const bare = await run(['embed'], {});
    expect(bare.code).not.toBe(0);
    expect(bare.errorCode()).toBe('NO_EMBEDDER');
    const before = await run(['recall', 'my dog', '--json'], {});
    expect((before.json() as { items: unknown[] }).items).toEqual([]);

    const embedded = await run(['embed', '--json']);
    expect(embedded.json()).toEqual({ model: MODEL, turns: 2, facts: 0, remaining: false });
    expect((await run(['embed'])).stdout).toContain('nothing left to embed');

    const found = await run(['recall', 'my dog', '--json', '--k', '1']);
    expect((found.json() as { items: { text: string }[] }).items[0]?.text).toBe(
      'We adopted a puppy in May.',
    );
    // flags win over the environment; --lexical leaves vectors out
    const flags = await run(
      ['recall', 'my dog', '--json', '--embedder-url', fake.baseUrl, '--embedder-model', MODEL],
      {},
    );
    expect((flags.json() as { items: { text: string }[] }).items.map((i) => i.text)).toEqual([
      'We adopted a puppy in May.',
    ]);
    const lexical = await run(['recall', 'my dog', '--json', '--lexical']);
    expect((lexical.json() as { items: unknown[] }).items).toEqual([]);
    const weightless = await run(['recall', 'my dog', '--json', '--vector-weight', '0']);
    expect((weightless.json() as { items: unknown[] }).items).toEqual([]);
    const half = await run(['recall', 'my dog', '--json', '--vector-weight', '0.5']);
    expect((half.json() as { items: { text: string }[] }).items[0]?.text).toBe(
      'We adopted a puppy in May.',
    );
    expect((await run(['recall', 'dog', '--vector-weight', '-1'])).errorCode()).toBe(
      'INVALID_ARGUMENT',
    );
    // a server and a path at once, or a URL without a model, is refused
    const both = await run(['embed', '--embedder-path', root]);
    expect(both.errorCode()).toBe('INVALID_ARGUMENT');
    const noModel = await run(['embed', '--embedder-url', fake.baseUrl], {});
    expect(noModel.errorCode()).toBe('INVALID_ARGUMENT');
  });
});

describe('bench locomo with an embedder', () => {
  it('embeds each conversation and says the ranking fused vectors in', async () => {
    const { runCliCaptured } = await import('./support/cli.js');
    const { writeFileSync } = await import('node:fs');
    const data = join(root, 'mini-locomo.json');
    writeFileSync(
      data,
      JSON.stringify([
        {
          sample_id: 'mini-v',
          conversation: {
            speaker_a: 'Jo',
            speaker_b: 'Sam',
            session_1_date_time: '1:56 pm on 8 May, 2023',
            session_1: [
              { speaker: 'Sam', dia_id: 'D1:1', text: 'My puppy Rex learned to fetch.' },
              { speaker: 'Jo', dia_id: 'D1:2', text: 'Good boy Rex!' },
            ],
          },
          qa: [
            { question: 'Does Sam have a dog?', answer: 'yes', evidence: ['D1:1'], category: 1 },
          ],
        },
      ]),
    );
    const args = ['bench', 'locomo', '--data', data, '--engines', 'pglite'];
    const fused = await runCliCaptured([...args, '--json'], {
      MEMLEDGER_EMBEDDER_URL: fake.baseUrl,
      MEMLEDGER_EMBEDDER_MODEL: MODEL,
    });
    expect(fused.code).toBe(0);
    const doc = fused.json() as { engines: { vectors: string | null; embedMs: number }[] };
    expect(doc.engines[0]?.vectors).toBe(MODEL);
    const lexical = await runCliCaptured(args);
    expect(lexical.stdout).toContain('ranking: lexical only (no embedder)');
  });
});

describe('a host’s own embedder', () => {
  it('is refused without a model name, and its failures are EMBEDDER_FAILED', async () => {
    const { createEngine } = await import('../src/index.js');
    const nameless = { model: ' ', embed: () => Promise.resolve([[1]]) };
    expect(await code(createEngine({ db: 'memory://', embedder: nameless }))).toBe(
      'INVALID_ARGUMENT',
    );
    let behaviour: 'throw' | 'tiny' | 'long' = 'throw';
    const engine = await createEngine({
      db: 'memory://',
      embedder: {
        model: 'host-model',
        embed(texts) {
          if (behaviour === 'throw') return Promise.reject(new TypeError('socket hang up'));
          // a component too small for a `real` once scaled, or more numbers than are stored
          const v = behaviour === 'tiny' ? [1, 1e-40, 0] : new Array<number>(16_001).fill(1);
          return Promise.resolve(texts.map(() => v));
        },
      },
    });
    try {
      await engine.subjects.create();
      const me = engine.subject();
      const s = await me.sessions.create();
      await me.turns.add({ sessionId: s.id, role: 'user', content: 'hello there' });
      const thrown = await me.vectors.embedPending().catch((e: Error & { code?: string }) => e);
      expect(thrown).toMatchObject({ code: 'EMBEDDER_FAILED' });
      expect((thrown as Error).message).toContain('socket hang up');
      behaviour = 'long';
      expect(await code(me.vectors.embedPending())).toBe('EMBEDDER_FAILED');
      behaviour = 'tiny';
      expect(await me.vectors.embedPending()).toMatchObject({ turns: 1, remaining: false });
      const { rows } = await storeClient(engine).query<{ e: number[] }>(
        'SELECT embedding AS e FROM turn_vectors',
      );
      expect(rows[0]?.e).toEqual([1, 0, 0]);
      // the store now has vectors: recall asks the embedder, and its failure is reported
      behaviour = 'throw';
      expect(await code(me.recall.search('hello'))).toBe('EMBEDDER_FAILED');
      expect((await me.recall.search('hello', { vectors: false })).map((i) => i.text)).toEqual([
        'hello there',
      ]);
    } finally {
      await engine.close();
    }
  });
});
