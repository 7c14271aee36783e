// Issue 36, item 1: the owner forgets for real. A marker planted in a user turn, a fact approved
// from it, a summary citing it, an agent's retraction of that fact, the dropped log and the
// vectors is gone after a signed forget: from every table (row by row), from the PGlite data
// directory's files (byte by byte, the write-ahead log included), and from every PostgreSQL
// relation file of the store (live and dead tuples). The negative control: the same scans find it
// before. Real engines, a real HTTP fake of the LLM and of the embeddings API.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createEngine,
  createLlmClient,
  openAiEmbedder,
  type Engine,
  type SubjectHandle,
} from '../src/index.js';
import { storeClient } from '../src/engine/test-access.js';
import { callerForToken } from '../server/access.js';
import { createMcpServer } from '../server/mcp/mcp-server.js';
import { reindexRecall } from '../src/store/recall-reindex.js';
import { DecisionSql } from '../src/store/decision-sql.js';
import { nodeChainCrypto } from '../src/crypto/chain-crypto.js';
import { nextLinkFields, sealLink } from '../src/domain/decision-chain.js';
import { forgetNote, forgetTarget, targetsOf } from '../src/domain/forget.js';
import { startFakeLlm, type FakeLlm } from '../eval/fake-llm/fake-llm-server.js';
import {
  PG_URL,
  quietEngines,
  testStore,
  type EngineKind,
  type TestStore,
} from './support/engines.js';
import { code } from './support/errors.js';
import { startFakeEmbeddings, type FakeEmbeddings } from './support/fake-embeddings.js';
import { makeOwnerSigner } from './support/tokens.js';
import { TEST_KEYS } from './support/test-keys.js';

const { signer } = makeOwnerSigner(TEST_KEYS);
const root = mkdtempSync(join(tmpdir(), 'ml-forget-'));

/** A word no stemmer shortens (no vowel, no s or y), unique to this run. */
function marker(): string {
  const letters = 'bcdfghjkmnpqrtvwxz';
  let m = 'qzx';
  for (let i = 0; i < 9; i++) m += letters[Math.floor(Math.random() * letters.length)];
  return m;
}

/** Every table of the store's schema and the planner's statistics, as text, that hold `m`. */
async function tablesHolding(engine: Engine, m: string): Promise<string[]> {
  const sql = storeClient(engine);
  const { rows: tables } = await sql.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const out: string[] = [];
  for (const { name } of tables) {
    const { rows } = await sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${name}" t WHERE strpos(t::text, $1) > 0`,
      [m],
    );
    if ((rows[0]?.n ?? 0) > 0) out.push(name);
  }
  const stats = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_catalog.pg_statistic s WHERE strpos(s::text, $1) > 0`,
    [m],
  );
  if ((stats.rows[0]?.n ?? 0) > 0) out.push('pg_statistic');
  return out;
}

/** The files under `dir` whose bytes hold `m`. */
function filesHolding(dir: string, m: string): string[] {
  const needle = Buffer.from(m, 'utf8');
  const hits: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (readFileSync(p).includes(needle)) hits.push(p.slice(dir.length + 1));
    }
  };
  walk(dir);
  return hits;
}

/**
 * PostgreSQL: the relation files (tables, TOAST, indexes) of the store's schema, and of the
 * statistics catalog, that hold `m` in any tuple, live or dead, read byte by byte as a superuser
 * after a checkpoint writes every dirty page out.
 */
async function pgRelationsHolding(schema: string, m: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    await c.query('CHECKPOINT');
    const { rows } = await c.query<{ relname: string }>(
      `WITH ns AS (SELECT oid FROM pg_namespace WHERE nspname = $1),
       rels AS (
         SELECT c.oid FROM pg_class c WHERE c.relnamespace IN (SELECT oid FROM ns)
         UNION SELECT c.reltoastrelid FROM pg_class c
           WHERE c.relnamespace IN (SELECT oid FROM ns) AND c.reltoastrelid <> 0
         UNION SELECT i.indexrelid FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
           WHERE t.oid IN (SELECT reltoastrelid FROM pg_class WHERE relnamespace IN (SELECT oid FROM ns))
         UNION SELECT 'pg_catalog.pg_statistic'::regclass::oid)
       SELECT c.relname FROM pg_class c JOIN rels r ON r.oid = c.oid
       WHERE c.relkind IN ('r', 'i', 't') AND pg_relation_filepath(c.oid) IS NOT NULL
         AND position(convert_to($2, 'UTF8')
                      IN pg_read_binary_file(pg_relation_filepath(c.oid))) > 0`,
      [schema, m],
    );
    return rows.map((r) => r.relname).sort();
  } finally {
    await c.end();
  }
}

/** Turns in order, the user's and the assistant's in turn (each reply with no tools run). */
async function conversation(me: SubjectHandle, sessionId: string, said: readonly string[]) {
  for (const [i, content] of said.entries()) {
    await me.turns.add(
      i % 2 === 0
        ? { sessionId, role: 'user', content }
        : { sessionId, role: 'assistant', content, receipt: { noTools: true } },
    );
  }
}

describe.each(quietEngines())('forgetting, signed and complete [%s]', (kind: EngineKind) => {
  let fake: FakeLlm;
  let embeddings: FakeEmbeddings;
  let store: TestStore;
  let engine: Engine;
  let subjects = 0;

  beforeAll(async () => {
    fake = await startFakeLlm({ protocol: 'openai', apiKey: 'sk-test', script: [] });
    embeddings = await startFakeEmbeddings();
    store = testStore(kind, root);
    engine = await createEngine({
      db: store.db,
      create: true,
      embedder: openAiEmbedder({ baseUrl: embeddings.baseUrl, model: 'fake-concepts' }),
      llm: createLlmClient({
        provider: 'openai',
        baseUrl: fake.url,
        model: 'fake-1',
        apiKey: 'sk-test',
        retries: 0,
        timeoutMs: 5000,
      }),
    });
  });
  afterAll(async () => {
    await engine.close();
    await store.cleanup();
    await fake.close();
    await embeddings.close();
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /** A subject whose every kind of record holds the marker, through turn 1 of one session. */
  async function planted(m: string) {
    const id = `fg${++subjects}`;
    await engine.subjects.create(id);
    const me = engine.subject(id);
    await me.owner.setKey({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
    await me.slots.declare({ name: 'life_lately', rule: 'summary' });
    const session = (await me.sessions.create()).id;
    await conversation(me, session, [
      `I use the code word ${m} for my locker at the pool.`,
      'Noted.',
      'I have a grey cat called Miso.',
    ]);
    const r = await me.gate.propose({
      sessionId: session,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: `The user's locker code word is ${m}.`,
          origin: 'saw',
          evidence: { turn: 1, quote: `I use the code word ${m} for my locker` },
        },
        {
          slot: 'what_i_know_about_user',
          text: `The user's bike lock code is ${m}.`,
          origin: 'saw',
          evidence: { turn: 1, quote: `my bike lock is ${m}` },
        },
        {
          slot: 'what_i_know_about_user',
          text: 'The user has a grey cat called Miso.',
          origin: 'saw',
          evidence: { turn: 3, quote: 'I have a grey cat called Miso' },
        },
      ],
    });
    expect(r.dropped.map((d) => d.code)).toEqual(['QUOTE_NOT_FOUND']);
    const [locker, cat] = r.proposed.map((p) => p.id);
    await me.owner.decide({ proposalId: locker!, decision: 'approve', signer });
    await me.owner.decide({ proposalId: cat!, decision: 'approve', signer });
    const summary = await me.summaries.summarize({ aspect: 'life_lately', sessionId: session });
    expect(summary.text).toContain(m);
    await me.owner.decide({ proposalId: summary.factId!, decision: 'approve', signer });
    // an agent's retraction of the approved fact, unsigned: disputed, its claim holding the marker
    await me.ledger.retract({
      claim: `The user's locker code word is ${m}.`,
      stoodOn: 'what the user said at the pool',
      whyWrong: 'the user changed it',
      corrected: 'The user has a new locker code word.',
      procedure: 'ask the user',
      passObservation: 'the user says the old word',
      overturnCondition: 'the user says the old word again',
      caughtBy: 'self',
      factId: locker!,
    });
    const embedded = await me.vectors.embedPending();
    expect(embedded.turns).toBeGreaterThan(0);
    return { me, session, locker: locker!, cat: cat!, summaryFact: summary.factId! };
  }

  async function scans(m: string): Promise<{ tables: string[]; files: string[] }> {
    if (kind === 'pglite') {
      await storeClient(engine).exec('CHECKPOINT');
      return { tables: await tablesHolding(engine, m), files: filesHolding(store.db, m) };
    }
    const schema = new URL(store.db).searchParams.get('schema')!;
    return { tables: await tablesHolding(engine, m), files: await pgRelationsHolding(schema, m) };
  }

  it('a forgotten turn leaves no trace: not in a table, a file, recall, arrival or history; the chain verifies and a tombstone keeps its place', async () => {
    const m = marker();
    const { me, session, locker, cat, summaryFact } = await planted(m);

    // the negative control: the same scans find the marker first
    const before = await scans(m);
    expect(before.tables).toEqual(
      expect.arrayContaining([
        'turns',
        'facts',
        'retractions',
        'dropped_proposals',
        'summary_sentences',
        'turn_postings',
        'term_stats',
        'session_terms',
      ]),
    );
    expect(before.files.length).toBeGreaterThan(0);
    expect((await me.recall.search(m)).length).toBeGreaterThan(0);

    // a live fact cites the turn: refused, and nothing changes
    const plan = await me.owner.forgetPlan({ kind: 'turn', session, seq: 1 });
    expect(plan.liveFacts.map((f) => f.id)).toEqual([locker]);
    expect(plan.targets.facts).toEqual(expect.arrayContaining([locker, summaryFact]));
    expect(plan.targets.facts).not.toContain(cat);
    expect(await code(me.owner.forget({ scope: { kind: 'turn', session, seq: 1 }, signer }))).toBe(
      'FORGET_CITED',
    );
    expect((await me.facts.live()).map((f) => f.id)).toContain(locker);

    const done = await me.owner.forget({
      scope: { kind: 'turn', session, seq: 1 },
      withFacts: true,
      signer,
    });
    expect(done.removed).toMatchObject({ turns: 1, summaries: 1, retractions: 1, dropped: 1 });
    expect(done.removed.facts).toBe(2);
    expect(done.scrub.walCleared).toBe(kind === 'pglite');

    const after = await scans(m);
    expect(after).toEqual({ tables: [], files: [] });

    // the chain verifies; the cat fact stays live, the others are gone
    expect((await me.owner.verifyChain()).ok).toBe(true);
    expect((await me.facts.live()).map((f) => f.id)).toEqual([cat]);
    const history = await me.history.render(session);
    expect(history).toContain(
      `[turn 1: forgotten by the owner on ${done.forgottenAt.toISOString().slice(0, 10)}]`,
    );
    expect(history).toContain('grey cat called Miso');
    expect(history).not.toContain(m);
    expect((await me.history.messages(session))[0]?.content).toMatch(/^\[turn 1: forgotten/);
    expect(JSON.stringify(await me.recall.search(m, { includeHistory: true }))).not.toContain(m);
    const arrival = await me.arrival.assemble({ surface: 'chat', sessionId: session, message: m });
    expect(arrival.text).not.toContain(m);
    expect(arrival.text).not.toContain('Integrity warning');

    // an agent's MCP tools read none of it
    const agent = await me.owner.createToken({ role: 'agent', name: 'agent', signer });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createMcpServer(await callerForToken(engine, agent.token)).connect(serverSide);
    const mcp = new Client({ name: 'forget-test', version: '1.0.0' });
    await mcp.connect(clientSide);
    try {
      for (const [name, args] of [
        ['read_history', { sessionId: session }],
        ['recall', { query: m }],
        ['list_memories', {}],
        ['get_arrival', { sessionId: session, message: m }],
      ] as const) {
        const r = await mcp.callTool({ name, arguments: args });
        expect(r.isError, name).not.toBe(true);
        expect(JSON.stringify(r), name).not.toContain(m);
      }
      const h = await mcp.callTool({ name: 'read_history', arguments: { sessionId: session } });
      expect(JSON.stringify(h)).toContain('[turn 1: forgotten by the owner on');
    } finally {
      await mcp.close();
    }

    // the gate drops a new proposal that cites the forgotten turn, and keeps none of its words
    const again = await me.gate.propose({
      sessionId: session,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: `The user's locker code word is ${m}.`,
          origin: 'saw',
          evidence: { turn: 1, quote: `I use the code word ${m} for my locker` },
        },
      ],
    });
    expect(again.dropped.map((d) => d.code)).toEqual(['EVIDENCE_FORGOTTEN']);
    expect(await tablesHolding(engine, m)).toEqual([]);

    // the recall index is what a rebuild from the turns makes of it
    const sql = storeClient(engine);
    const stats = () =>
      sql.query(
        `SELECT (SELECT json_agg(t ORDER BY term) FROM term_stats t WHERE subject_id = $1) AS ts,
                (SELECT json_agg(s ORDER BY term, session_id) FROM session_terms s WHERE subject_id = $1) AS st,
                (SELECT json_agg(c) FROM recall_corpus c WHERE subject_id = $1) AS c,
                (SELECT json_agg(x ORDER BY id) FROM (SELECT id, term_len FROM sessions WHERE subject_id = $1) x) AS s`,
        [me.id],
      );
    const kept = (await stats()).rows;
    await reindexRecall(sql);
    expect((await stats()).rows).toEqual(kept);
  });

  it('a forget is refused when nothing matches, names the scope it could not read, and an agent signer cannot sign one', async () => {
    const m = marker();
    const { me, session } = await planted(m);
    expect(
      await code(
        me.owner.forget({ scope: { kind: 'phrase', phrase: 'no such words here' }, signer }),
      ),
    ).toBe('NOTHING_TO_FORGET');
    expect(await code(me.owner.forget({ scope: { kind: 'phrase', phrase: ' a ' }, signer }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(await code(me.owner.forget({ scope: { kind: 'turn', session, seq: 99 }, signer }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(
      await code(me.owner.forget({ scope: { kind: 'session', session: 'nope' }, signer })),
    ).toBe('SESSION_NOT_FOUND');
    const other = makeOwnerSigner(TEST_KEYS).signer;
    expect(
      await code(me.owner.forget({ scope: { kind: 'turn', session, seq: 3 }, signer: other })),
    ).toBe('WRONG_KEY');
    expect(await tablesHolding(engine, m)).toEqual(
      expect.arrayContaining(['turns', 'facts', 'retractions']),
    );
  });

  it('a forget link written by SQL, and the fact it deletes, are refused like a forged approval and named', async () => {
    const m = marker();
    const { me, locker, cat } = await planted(m);
    const sql = storeClient(engine);
    const chain = await new DecisionSql(sql).chain(me.id);
    const tip = chain.at(-1)!;
    const approvedAt = () => chain.find((l) => l.proposalId === locker)!.seq;
    const note = forgetNote(targetsOf('fact', { facts: [locker] }));
    // the owner's key id, another key's signature: what a process with the store can write
    const forger = makeOwnerSigner(TEST_KEYS).signer;
    const link = sealLink(
      nextLinkFields(tip, {
        subjectId: me.id,
        proposalId: forgetTarget('forged'),
        contentHash: nodeChainCrypto.sha256Hex(note),
        decision: 'forget',
        decidedAt: new Date().toISOString(),
        note,
        keyId: signer.keyId,
      }),
      nodeChainCrypto,
      { keyId: signer.keyId, sign: (x) => forger.sign(x) },
    );
    await new DecisionSql(sql).append(link);
    await sql.transaction(async (tx) => {
      await tx.query(`SELECT set_config('memledger.forgetting', 'on', true)`);
      await tx.query('DELETE FROM retractions WHERE subject_id = $1 AND fact_id = $2', [
        me.id,
        locker,
      ]);
      await tx.query('DELETE FROM fact_vectors WHERE subject_id = $1 AND fact_id = $2', [
        me.id,
        locker,
      ]);
      await tx.query('DELETE FROM facts WHERE subject_id = $1 AND id = $2', [me.id, locker]);
    });
    // broken where the forged link stands (a reader that verified the approval before), or at
    // the approval whose fact is gone (a reader from link 1): refused either way, and named
    const report = await me.owner.verifyChain();
    expect(report.ok).toBe(false);
    if (!report.ok) expect([approvedAt(), link.seq]).toContain(report.brokenAt);
    const view = await me.facts.integrity();
    expect(view.ok).toBe(false);
    expect(view.chain.broken).not.toBeNull();
    expect(view.warning.join('\n')).toContain(locker);
    const arrival = await me.arrival.assemble({ surface: 'chat' });
    expect(arrival.text).toContain('Integrity warning');
    expect(arrival.text).toContain(locker);
    expect((await me.facts.live()).map((f) => f.id)).not.toContain(locker);
    // the owner's decisions stop until the chain is whole again
    expect(await code(me.owner.forget({ scope: { kind: 'fact', fact: cat }, signer }))).toBe(
      'CHAIN_BROKEN',
    );
  });

  it('an agent asks, quoting the user; nothing is forgotten until the owner honours or declines', async () => {
    const id = `fg${++subjects}`;
    await engine.subjects.create(id);
    const me = engine.subject(id);
    await me.owner.setKey({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
    const session = (await me.sessions.create()).id;
    await conversation(me, session, [
      'My divorce was finalised in May.',
      'I am sorry.',
      'Please forget that I told you about my divorce.',
    ]);
    const ask = {
      sessionId: session,
      turn: 3,
      quote: 'forget that I told you about my divorce',
      scope: { kind: 'phrase', phrase: 'divorce' } as const,
    };
    // the user's own words, from a user turn, or nothing is recorded
    expect(await code(me.gate.requestForget({ ...ask, quote: 'forget my divorce' }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(await code(me.gate.requestForget({ ...ask, turn: 2, quote: 'I am sorry' }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(await code(me.gate.requestForget({ ...ask, turn: 9 }))).toBe('INVALID_ARGUMENT');
    expect(
      await code(me.gate.requestForget({ ...ask, scope: { kind: 'phrase', phrase: 'a' } })),
    ).toBe('INVALID_ARGUMENT');
    expect(await me.gate.forgetRequests()).toEqual([]);

    // an agent token files one through MCP; it has no tool that forgets
    const agent = await me.owner.createToken({ role: 'agent', name: 'agent', signer });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createMcpServer(await callerForToken(engine, agent.token)).connect(serverSide);
    const mcp = new Client({ name: 'forget-test', version: '1.0.0' });
    await mcp.connect(clientSide);
    const requestId = await (async () => {
      try {
        const tools = (await mcp.listTools()).tools.map((t) => t.name);
        expect(tools.filter((n) => n.includes('forget'))).toEqual(['request_forget']);
        const r = await mcp.callTool({ name: 'request_forget', arguments: ask });
        expect(r.isError, JSON.stringify(r)).not.toBe(true);
        expect(JSON.stringify(r.content)).toContain('nothing is forgotten yet');
        return (r.structuredContent as { id: string }).id;
      } finally {
        await mcp.close();
      }
    })();
    expect(await me.gate.forgetRequests({ status: 'pending' })).toMatchObject([
      { id: requestId, turn: 3, quote: ask.quote, scope: ask.scope, requestedBy: 'agent' },
    ]);
    expect(await me.history.render(session)).toContain('My divorce was finalised');

    // a second request, declined: nothing forgotten, and it cannot be honoured after
    const other = await me.gate.requestForget({ ...ask, scope: { kind: 'turn', session, seq: 1 } });
    expect(await me.owner.declineForget({ request: other.id })).toMatchObject({
      status: 'declined',
    });
    expect(await code(me.owner.declineForget({ request: other.id }))).toBe('NOT_PENDING');
    expect(await code(me.owner.forget({ request: other.id, signer }))).toBe('NOT_PENDING');
    expect(await code(me.owner.forget({ request: 'nope', signer }))).toBe(
      'FORGET_REQUEST_NOT_FOUND',
    );

    const done = await me.owner.forget({ request: requestId, signer });
    expect(done.removed).toMatchObject({ turns: 2, requests: 2 });
    const history = await me.history.render(session);
    expect(history).not.toContain('divorce');
    expect(history).toContain('I am sorry.');
    const [honoured] = await me.gate.forgetRequests({ status: 'honoured' });
    expect(honoured).toMatchObject({
      id: requestId,
      quote: '',
      scope: { kind: 'phrase' },
      forgetId: done.forgetId,
    });
    expect(JSON.stringify(await me.gate.forgetRequests())).not.toContain('divorce');
    expect(await tablesHolding(engine, 'divorce')).toEqual([]);
    expect((await me.owner.verifyChain()).ok).toBe(true);
  });

  it('a phrase is forgotten wherever it is: the owner sees what holds it, then confirms', async () => {
    const m = marker();
    const { me, session, cat } = await planted(m);
    await me.turns.add({
      sessionId: session,
      role: 'assistant',
      content: `Your locker word ${m} is safe with me.`,
      receipt: { noTools: true },
    });
    const plan = await me.owner.forgetPlan({ kind: 'phrase', phrase: m.toUpperCase() });
    expect(plan.targets.turns).toEqual([
      [session, 1, 1],
      [session, 4, 4],
    ]);
    expect(plan.liveFacts).toEqual([]);
    const done = await me.owner.forget({ scope: { kind: 'phrase', phrase: m }, signer });
    expect(done.removed.turns).toBe(2);
    expect(await tablesHolding(engine, m)).toEqual([]);
    expect((await me.owner.verifyChain()).ok).toBe(true);
    expect((await me.facts.live()).map((f) => f.id)).toEqual([cat]);
  });
});
