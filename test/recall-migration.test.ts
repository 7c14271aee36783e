import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine, EngineError } from '../src/index.js';
import { storeClient } from '../src/engine/test-access.js';
import { analyze, ANALYZER_VERSION, turnTerms } from '../src/domain/text/analyze.js';
import { PgliteClient } from '../src/pglite/pglite-client.js';
import { PostgresClient } from '../src/postgres/postgres-client.js';
import { migrate } from '../src/store/migrator.js';
import { MIGRATIONS } from '../src/store/migrations/index.js';
import { openSqlClient } from '../src/store/open-store.js';
import {
  checkRecallIndex,
  reindexRecall,
  requireCurrentRecallIndex,
} from '../src/store/recall-reindex.js';
import type { SqlClient, SqlExecutor } from '../src/store/sql-client.js';
import { TurnSql } from '../src/store/turn-sql.js';
import {
  ENGINES,
  dropSchema,
  pgUrlWithSchema,
  uniqueSchema,
  type EngineKind,
} from './support/engines.js';
import { emptyTemplate } from './support/store-template.js';

const root = mkdtempSync(join(tmpdir(), 'memledger-recall-mig-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A store location of the given kind that outlives its client: a directory, or a schema. */
function location(kind: EngineKind, name: string): { db: string; drop(): Promise<void> } {
  if (kind === 'pglite')
    return { db: join(root, `${name}-${uniqueSchema()}`), drop: async () => {} };
  const schema = uniqueSchema();
  return { db: pgUrlWithSchema(schema), drop: () => dropSchema(schema) };
}

/**
 * The store's client without migrating it (what a previous release would have opened); a new
 * embedded one starts from the run's unmigrated template, not initdb.
 */
function openRaw(kind: EngineKind, db: string, create: boolean): Promise<SqlClient> {
  return kind === 'pglite'
    ? PgliteClient.open({ location: db, create, template: emptyTemplate() })
    : PostgresClient.open({ url: db, create });
}

/** The EngineError `run` rejects with (closing whatever it opened if it does not reject). */
async function refusal(run: () => Promise<unknown>): Promise<EngineError> {
  try {
    const opened = await run();
    if (opened !== null && typeof opened === 'object' && 'close' in opened) {
      await (opened as { close(): Promise<void> }).close();
    }
  } catch (err) {
    if (err instanceof EngineError) return err;
    throw err;
  }
  throw new Error('nothing was refused');
}

/** A store as the previous release left it: migrations 1–5 only, turns and a fact written. */
async function oldStore(client: SqlClient): Promise<void> {
  await migrate(
    client,
    MIGRATIONS.filter((m) => m.version <= 5),
  );
  await client.exec(`
    INSERT INTO subjects (id, created_at) VALUES ('owner', now());
    INSERT INTO sessions (subject_id, id, last_seq, created_at) VALUES ('owner', 's1', 3, now());
    INSERT INTO turns (subject_id, session_id, seq, id, role, content, recorded_at) VALUES
      ('owner', 's1', 1, 't1', 'user', 'My violin lessons start on Thursday.', now()),
      ('owner', 's1', 2, 't2', 'user', 'The teacher is called Ines.', now()),
      ('owner', 's1', 3, 't3', 'user', 'I am here and there.', now());
    INSERT INTO slots (subject_id, name, rule, auto_live, declared_at)
      VALUES ('owner', 'what_i_know_about_user', 'user_fact', false, now());
    INSERT INTO facts (subject_id, id, slot, text, origin, status, attested, proposed_by,
                       recorded_at, status_at, promoted_by)
      VALUES ('owner', 'f1', 'what_i_know_about_user', 'User takes violin lessons', 'saw',
              'active', true, 'test', now(), now(), 'owner');`);
}

describe.each(ENGINES)('migration 0006 backfills the recall index [%s]', (kind) => {
  it('indexes turns and facts written before it, and recall finds them', async () => {
    const store = location(kind, 'old-store');
    try {
      const client = await openRaw(kind, store.db, true);
      try {
        await oldStore(client);
      } finally {
        await client.close();
      }
      const engine = await createEngine({ db: store.db, create: false });
      try {
        const sql = storeClient(engine);
        const { rows } = await sql.query<{ seq: number; terms: string[] }>(
          `SELECT seq, terms FROM turns ORDER BY seq`,
        );
        expect(rows.map((r) => r.terms)).toEqual([
          analyze('My violin lessons start on Thursday.'),
          analyze('The teacher is called Ines.'),
          [],
        ]);
        const corpus = await sql.query<{ turns: number; sessions: number; len: number }>(
          `SELECT turns::int, sessions, term_len::int AS len FROM recall_corpus`,
        );
        const len = rows.reduce((n, r) => n + r.terms.length, 0);
        expect(corpus.rows).toEqual([{ turns: 3, sessions: 1, len }]);
        const sessionLen = await sql.query<{ term_len: number }>(
          `SELECT term_len::int AS term_len FROM sessions`,
        );
        expect(sessionLen.rows[0]?.term_len).toBe(len);
        const postings = await sql.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM turn_postings WHERE term = $1`,
          [analyze('violin')[0]],
        );
        expect(postings.rows[0]?.n).toBe(1);
        // the append-only guard is back after the backfill
        await expect(sql.query(`UPDATE turns SET content = 'x' WHERE seq = 1`)).rejects.toThrow(
          /append-only/,
        );
        // 0006 ran in the same migration run as 0008: this code's analyser built the index
        expect(await checkRecallIndex(sql)).toEqual({
          current: true,
          stored: ANALYZER_VERSION,
          expected: ANALYZER_VERSION,
        });
        // the fact was written as live with no decision behind it: the index finds it, and
        // recall labels it unverified instead of showing it as live (docs/TRUST.md)
        const items = await engine
          .subject()
          .recall.search('violin lessons', { includeHistory: true });
        expect(items.map((i) => [i.kind, i.id])).toEqual(
          expect.arrayContaining([
            ['turn', 't1'],
            ['fact', 'f1'],
          ]),
        );
        expect(items.find((i) => i.id === 'f1')?.passport.status).toBe('unverified');
        const live = await engine.subject().recall.search('violin lessons');
        expect(live.map((i) => i.id)).not.toContain('f1');
      } finally {
        await engine.close();
      }
    } finally {
      await store.drop();
    }
  });
});

/** An analyser that is not this code's: no stopwords, no stemming. */
const staleAnalyze = (text: string): string[] =>
  text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);

const TURNS: ReadonlyArray<{
  subject: string;
  session: string;
  speaker: string | null;
  content: string;
}> = [
  {
    subject: 'alice',
    session: 'a1',
    speaker: null,
    content: 'My violin lessons start on Thursday.',
  },
  { subject: 'alice', session: 'a1', speaker: 'Ines', content: 'Lessons are at the studio.' },
  { subject: 'alice', session: 'a1', speaker: null, content: 'I am here and there.' },
  { subject: 'alice', session: 'a2', speaker: null, content: 'The violin needs new strings.' },
  { subject: 'alice', session: 'a2', speaker: 'Noor', content: "Noor's sedan broke down again." },
  { subject: 'bob', session: 'b1', speaker: null, content: 'Bob plays the cello on Thursdays.' },
  { subject: 'bob', session: 'b1', speaker: null, content: 'Cello lessons, cello strings.' },
];

const FACTS: ReadonlyArray<{ subject: string; id: string; text: string }> = [
  { subject: 'alice', id: 'fa1', text: 'User takes violin lessons on Thursdays' },
  { subject: 'alice', id: 'fa2', text: "User's teacher is called Ines" },
  { subject: 'bob', id: 'fb1', text: 'User plays the cello' },
];

/** Writes the turns and facts above as the engine writes them, with the given analyser. */
async function seed(
  client: SqlClient,
  terms: { turn: (speaker: string | null, content: string) => string[]; fact: typeof analyze },
): Promise<void> {
  for (const subject of ['alice', 'bob']) {
    await client.query(`INSERT INTO subjects (id, created_at) VALUES ($1, now())`, [subject]);
    await client.query(
      `INSERT INTO slots (subject_id, name, rule, auto_live, declared_at)
       VALUES ($1, 'what_i_know_about_user', 'user_fact', false, now())`,
      [subject],
    );
  }
  for (const session of new Set(TURNS.map((t) => `${t.subject}/${t.session}`))) {
    const [subject, id] = session.split('/');
    await client.query(`INSERT INTO sessions (subject_id, id, created_at) VALUES ($1, $2, now())`, [
      subject,
      id,
    ]);
  }
  const turns = new TurnSql(client);
  for (const [i, t] of TURNS.entries()) {
    await turns.insert({
      id: `t${i}`,
      subjectId: t.subject,
      sessionId: t.session,
      role: 'user',
      content: t.content,
      corrective: false,
      receipt: null,
      at: new Date(Date.UTC(2025, 0, 1, 0, i)),
      speaker: t.speaker,
      terms: terms.turn(t.speaker, t.content),
    });
  }
  for (const f of FACTS) {
    await client.query(
      `INSERT INTO facts (subject_id, id, slot, text, origin, status, attested, proposed_by,
                          recorded_at, status_at, promoted_by, terms)
       VALUES ($1, $2, 'what_i_know_about_user', $3, 'saw', 'active', true, 'test', now(), now(),
               'owner', $4::text[])`,
      [f.subject, f.id, f.text, terms.fact(f.text)],
    );
  }
}

/** Everything the recall index is made of, in a stable order. */
async function indexDump(db: SqlExecutor): Promise<Record<string, unknown[]>> {
  const q = async (sql: string): Promise<unknown[]> => (await db.query(sql)).rows;
  return {
    turns: await q(`SELECT subject_id, session_id, seq, terms FROM turns
      ORDER BY subject_id, session_id, seq`),
    facts: await q(`SELECT subject_id, id, terms FROM facts ORDER BY subject_id, id`),
    sessions: await q(`SELECT subject_id, id, term_len::int AS term_len FROM sessions
      ORDER BY subject_id, id`),
    postings: await q(`SELECT subject_id, term, session_id, seq, tf, len FROM turn_postings
      ORDER BY subject_id, term, session_id, seq`),
    termStats: await q(
      `SELECT subject_id, term, df, sdf FROM term_stats ORDER BY subject_id, term`,
    ),
    sessionTerms: await q(`SELECT subject_id, term, session_id, tf FROM session_terms
      ORDER BY subject_id, term, session_id`),
    corpus: await q(`SELECT subject_id, turns::int AS turns, sessions, term_len::int AS term_len
      FROM recall_corpus ORDER BY subject_id`),
  };
}

describe.each(ENGINES)('a recall index built by another analyzer version [%s]', (kind) => {
  it('is refused on open with REINDEX_REQUIRED, and a reindex rebuilds it as a fresh index', async () => {
    const stale = location(kind, 'stale');
    const fresh = location(kind, 'fresh');
    try {
      // the reference: the same turns and facts, indexed by this code's analyser as written
      const reference = await openSqlClient({ db: fresh.db, create: true });
      let expected: Record<string, unknown[]>;
      try {
        await seed(reference, { turn: turnTerms, fact: analyze });
        expected = await indexDump(reference);
      } finally {
        await reference.close();
      }
      expect(expected.postings?.length).toBeGreaterThan(10);

      const client = await openSqlClient({ db: stale.db, create: true });
      let before: Record<string, unknown[]>;
      try {
        await seed(client, {
          turn: (speaker, content) => [
            ...(speaker === null ? [] : staleAnalyze(speaker)),
            ...staleAnalyze(content),
          ],
          fact: staleAnalyze,
        });
        await client.query(`UPDATE recall_index SET analyzer_version = 'stale-0'`);
        expect(await checkRecallIndex(client)).toEqual({
          current: false,
          stored: 'stale-0',
          expected: ANALYZER_VERSION,
        });
        before = await indexDump(client);
      } finally {
        await client.close();
      }
      expect(before).not.toEqual(expected);

      // refused by the engine on open, and by the check itself, and nothing is changed
      const opened = await refusal(() => createEngine({ db: stale.db, create: false }));
      expect(opened.code).toBe('REINDEX_REQUIRED');
      expect(opened.message).toContain('memledger reindex');
      expect(opened.message).toContain('stale-0');

      const raw = await openRaw(kind, stale.db, false);
      try {
        const checked = await refusal(() => requireCurrentRecallIndex(raw));
        expect(checked.code).toBe('REINDEX_REQUIRED');
        expect(checked.message).toContain('memledger reindex');
        expect(await indexDump(raw)).toEqual(before);
        const progress: Array<{ done: number; total: number }> = [];
        const result = await reindexRecall(raw, { onProgress: (p) => progress.push(p) });
        expect(result).toEqual({ turns: TURNS.length, facts: FACTS.length });
        const total = TURNS.length + FACTS.length;
        expect(progress.at(-1)).toEqual({ done: total, total });
        expect(progress.map((p) => p.done)).toEqual(
          progress.map((p) => p.done).sort((a, b) => a - b),
        );
        expect(await checkRecallIndex(raw)).toEqual({
          current: true,
          stored: ANALYZER_VERSION,
          expected: ANALYZER_VERSION,
        });
        expect(await indexDump(raw)).toEqual(expected);
        // the guards lifted for the rebuild are back
        await expect(raw.query(`UPDATE turns SET content = 'x' WHERE id = 't0'`)).rejects.toThrow(
          /append-only/,
        );
        await expect(raw.query(`UPDATE facts SET terms = '{x}' WHERE id = 'fa1'`)).rejects.toThrow(
          /written once/,
        );
        // a reindex of a current index changes nothing; `ifStale` skips it
        expect(await reindexRecall(raw)).toEqual({ turns: TURNS.length, facts: FACTS.length });
        expect(await indexDump(raw)).toEqual(expected);
        expect(await reindexRecall(raw, { ifStale: true })).toEqual({ turns: 0, facts: 0 });
        // marked stale again, for the opener's own rebuild below
        await raw.query(`UPDATE recall_index SET analyzer_version = 'stale-1'`);
      } finally {
        await raw.close();
      }

      // `reindex: true` rebuilds instead of refusing
      const rebuilt = await createEngine({ db: stale.db, create: false, reindex: true });
      try {
        expect(rebuilt.reindexed).toEqual({ turns: TURNS.length, facts: FACTS.length });
        expect((await checkRecallIndex(storeClient(rebuilt))).current).toBe(true);
        expect(await indexDump(storeClient(rebuilt))).toEqual(expected);
      } finally {
        await rebuilt.close();
      }
      const engine = await createEngine({ db: stale.db, create: false });
      try {
        expect(engine.reindexed).toBeNull();
        const items = await engine
          .subject('alice')
          .recall.search('violin lessons', { includeHistory: true });
        expect(items.map((i) => i.id)).toEqual(expect.arrayContaining(['t0', 'fa1']));
      } finally {
        await engine.close();
      }
    } finally {
      await stale.drop();
      await fresh.drop();
    }
  });

  it('records the version that built an index from before the version was recorded', async () => {
    for (const indexed of [true, false]) {
      const store = location(kind, 'seven');
      try {
        const client = await openRaw(kind, store.db, true);
        try {
          await migrate(
            client,
            MIGRATIONS.filter((m) => m.version <= 7),
          );
          if (indexed) await seed(client, { turn: turnTerms, fact: analyze });
          await migrate(client);
          // every release before migration 0008 analysed text as version 1; with nothing
          // indexed yet, this code's analyser builds the index
          expect((await checkRecallIndex(client)).stored).toBe(indexed ? '1' : ANALYZER_VERSION);
        } finally {
          await client.close();
        }
      } finally {
        await store.drop();
      }
    }
  });
});
