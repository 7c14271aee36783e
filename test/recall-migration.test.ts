import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { analyze, createEngine } from '../src/index.js';
import { PgliteClient } from '../src/pglite/pglite-client.js';
import { PostgresClient } from '../src/postgres/postgres-client.js';
import { migrate } from '../src/store/migrator.js';
import { MIGRATIONS } from '../src/store/migrations/index.js';
import type { SqlClient } from '../src/store/sql-client.js';
import { ENGINES, dropSchema, pgUrlWithSchema, uniqueSchema } from './support/engines.js';

const root = mkdtempSync(join(tmpdir(), 'memledger-recall-mig-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

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
    const schema = uniqueSchema();
    const db = kind === 'pglite' ? join(root, 'old-store') : pgUrlWithSchema(schema);
    try {
      const client: SqlClient =
        kind === 'pglite'
          ? await PgliteClient.open({ location: db, create: true })
          : await PostgresClient.open({ url: db, create: true });
      try {
        await oldStore(client);
      } finally {
        await client.close();
      }
      const engine = await createEngine({ db, create: false });
      try {
        const { rows } = await engine.sql.query<{ seq: number; terms: string[] }>(
          `SELECT seq, terms FROM turns ORDER BY seq`,
        );
        expect(rows.map((r) => r.terms)).toEqual([
          analyze('My violin lessons start on Thursday.'),
          analyze('The teacher is called Ines.'),
          [],
        ]);
        const corpus = await engine.sql.query<{ turns: number; sessions: number; len: number }>(
          `SELECT turns::int, sessions, term_len::int AS len FROM recall_corpus`,
        );
        const len = rows.reduce((n, r) => n + r.terms.length, 0);
        expect(corpus.rows).toEqual([{ turns: 3, sessions: 1, len }]);
        const sessionLen = await engine.sql.query<{ term_len: number }>(
          `SELECT term_len::int AS term_len FROM sessions`,
        );
        expect(sessionLen.rows[0]?.term_len).toBe(len);
        const postings = await engine.sql.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM turn_postings WHERE term = $1`,
          [analyze('violin')[0]],
        );
        expect(postings.rows[0]?.n).toBe(1);
        // the append-only guard is back after the backfill
        await expect(
          engine.sql.query(`UPDATE turns SET content = 'x' WHERE seq = 1`),
        ).rejects.toThrow(/append-only/);
        const items = await engine.recall('violin lessons');
        expect(items.map((i) => [i.kind, i.id])).toEqual(
          expect.arrayContaining([
            ['turn', 't1'],
            ['fact', 'f1'],
          ]),
        );
      } finally {
        await engine.close();
      }
    } finally {
      if (kind === 'postgres') await dropSchema(schema);
    }
  });
});
