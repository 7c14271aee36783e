/**
 * Migration 0012 (every key begins with the subject) on a store that holds data: a store at
 * migration 11, written through the engine's own API (sessions, turns, utility counts, facts
 * citing turns, a supersession, a retraction that took a fact down and was settled by a
 * calibrated probe, one overturned and restored, dropped proposals, commitments, actions, tools,
 * arrivals), is opened by this version. Migration 12 applies; every table holds the same rows
 * (a logical dump before and after, schema_migrations aside); live memory, the decision chain and
 * every read of the handles answer the same; the keys are the new ones; and the append-only
 * guards still refuse. A probe record of no subject (what versions before subject handles wrote
 * for `memledger probe run` without `--subject`) is removed, and only it.
 *
 * The engine writes the version-11 store with this version's code: `MIGRATIONS` is cut at 11 for
 * that (vi.mock below). Its statements differ from version 11's only in naming the subject and in
 * naming columns later migrations add (`slots.summary_scope`, `facts.evidence_citations`, and
 * the gate's verdict in `facts.attestation` and `attestation_reason`, a link's `decisions.format`,
 * the owner's signed retraction, a `retract` link, and a forgotten turn's tombstone columns),
 * and in the summary rule of a default slot (`life_lately`, migration 14's rule), which the mock adds to
 * migration 11; only the verdict is filled, so the rows are otherwise the ones version 11 wrote. A negative control: a store whose fact cites another
 * subject's turn (no version writes one) refuses to migrate, and stays at 11 as it was.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  createEngine,
  EngineError,
  generateOwnerKey,
  loadOwnerKey,
  writeOwnerKeyFile,
  type Engine,
  type EngineConfig,
  type OwnerSigner,
  type SubjectHandle,
  type FactId,
} from '../src/index.js';
import { storeClient } from '../src/engine/test-access.js';
import type * as MigrationsModule from '../src/store/migrations/index.js';
import type { Migration } from '../src/store/migrations/index.js';
import { dumpStore } from './support/dump-store.js';
import {
  dropSchema,
  ENGINES,
  pgUrlWithSchema,
  uniqueSchema,
  type EngineKind,
} from './support/engines.js';
import { TEST_KEYS } from './support/test-keys.js';
import { setEmbeddedTemplate } from '../src/store/embedded-template.js';
import { emptyTemplate } from './support/store-template.js';

// Its stores start at version 11: from the run's unmigrated template (the migrated one would be
// too new for the code cut at 11).
setEmbeddedTemplate(emptyTemplate);

/** The migrations the engine applies: cut at 11 until a test restores the rest. */
const migrations = vi.hoisted(() => ({ list: [] as Migration[], all: [] as Migration[] }));
vi.mock('../src/store/migrations/index.js', async (importOriginal) => {
  const real = await importOriginal<typeof MigrationsModule>();
  // columns a later migration adds that this version's statements name (nothing writes them
  // here, they stay null, but the gate's verdict columns, which migration 12 leaves as written),
  // added to migration 11 so this version's code can write that schema
  const shim = `
ALTER TABLE slots ADD COLUMN summary_scope text;
ALTER TABLE facts ADD COLUMN evidence_citations jsonb;
ALTER TABLE facts ADD COLUMN attestation text, ADD COLUMN attestation_reason text;
ALTER TABLE decisions ADD COLUMN format smallint NOT NULL DEFAULT 1;
ALTER TABLE decisions DROP CONSTRAINT decisions_decision_check;
ALTER TABLE decisions ADD CONSTRAINT decisions_decision_check
  CHECK (decision IN ('approve', 'reject', 'delegate', 'revoke', 'retract', 'forget', 'policy'));
ALTER TABLE turns ADD COLUMN forget_id text, ADD COLUMN forgotten_at timestamptz,
  ADD COLUMN forgotten_by text;
ALTER TABLE probe_calibrations ADD COLUMN imported boolean NOT NULL DEFAULT false;
ALTER TABLE slots DROP CONSTRAINT slots_rule_check;
ALTER TABLE slots ADD CONSTRAINT slots_rule_check
  CHECK (rule IN ('user_fact', 'correction', 'action', 'summary'));`;
  migrations.all = real.MIGRATIONS.map((m) =>
    m.version === 11 ? { ...m, sql: `${m.sql}${shim}` } : m,
  );
  migrations.list.push(...migrations.all.filter((m) => m.version <= 11));
  return { ...real, MIGRATIONS: migrations.list };
});
/**
 * From now on the engine applies migration 12 too, the one under test (later ones add tables and
 * columns, which a comparison of every row would see as changes: test/store-open.test.ts applies
 * them all).
 */
function upgradeCode(): void {
  migrations.list.splice(
    0,
    migrations.list.length,
    ...migrations.all.filter((m) => m.version <= 12),
  );
}
function version11Code(): void {
  migrations.list.splice(
    0,
    migrations.list.length,
    ...migrations.all.filter((m) => m.version <= 11),
  );
}

const DAY = 86_400_000;
const root = mkdtempSync(join(tmpdir(), 'memledger-subject-keys-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A store location that outlives its engine: a PGlite directory, or a PostgreSQL schema. */
function location(kind: EngineKind, name: string): { db: string; drop(): Promise<void> } {
  if (kind === 'pglite')
    return { db: join(root, `${name}-${uniqueSchema()}`), drop: async () => {} };
  const schema = uniqueSchema();
  return { db: pgUrlWithSchema(schema), drop: () => dropSchema(schema) };
}

async function versions(engine: Engine): Promise<number[]> {
  const { rows } = await storeClient(engine).query<{ version: number }>(
    'SELECT version FROM schema_migrations ORDER BY version',
  );
  return rows.map((r) => r.version);
}

/** The store's keys as pg_catalog defines them: `table name definition`. */
async function keys(engine: Engine): Promise<string[]> {
  const { rows } = await storeClient(engine).query<{ k: string }>(
    `SELECT c.relname || ' ' || con.conname || ' ' || pg_get_constraintdef(con.oid) AS k
     FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = current_schema() AND con.contype IN ('p', 'u', 'f')
     ORDER BY 1`,
  );
  return rows.map((r) => r.k);
}

/**
 * What the handles answer, for comparison before and after the upgrade. Utility usage is read
 * with version 11's own columns: this version's reader also selects the token counts migration
 * 13 added (test/reflection.test.ts reads them).
 */
async function reads(engine: Engine, me: SubjectHandle, sessions: string[]) {
  const perSession = [];
  for (const id of sessions) {
    const { rows: usage } = await storeClient(engine).query(
      `SELECT kind, requests, chars, first_at, last_at FROM utility_usage
       WHERE subject_id = $1 AND session_id = $2 ORDER BY kind`,
      [me.id, id],
    );
    perSession.push({
      session: await me.sessions.get(id),
      turns: await me.history.turns(id),
      last: await me.history.turns(id, { last: 1 }),
      usage,
    });
  }
  const ledger = await me.ledger.list();
  const log = await me.probes.log();
  return {
    sessions: await me.sessions.list(),
    perSession,
    live: await me.facts.live(),
    all: await me.facts.all(),
    integrity: await me.facts.integrity(),
    pile: await me.gate.pile(),
    dropped: await me.gate.dropped(),
    chain: await me.owner.verifyChain(),
    ledger,
    retractions: await Promise.all(ledger.map((r) => me.ledger.get(r.id))),
    log,
    records: await Promise.all(log.map((r) => me.probes.get(r.id))),
    commitments: await me.commitments.list(),
    tools: await me.tools.list(),
    diff: await me.arrival.diff({ surface: 'chat' }),
    recall: await me.recall.search('cello orchestra', { includeHistory: true }),
    slots: await me.slots.list(),
  };
}

describe.each(ENGINES)('migration 0012 on a store with data [%s]', (kind) => {
  it('applies to a version-11 store, and every row and read stays the same', async () => {
    const store = location(kind, 'eleven');
    const probeDir = join(root, `probes-${kind}`);
    mkdirSync(probeDir, { recursive: true });
    let now = new Date('2026-11-02T09:00:00Z');
    const config: EngineConfig = {
      db: store.db,
      clock: () => now,
      probes: { roots: [probeDir] },
    };
    const keyFile = join(root, `${kind}.key`);
    writeOwnerKeyFile(keyFile, generateOwnerKey('pw', TEST_KEYS).keyFile);
    const signer: OwnerSigner = loadOwnerKey(keyFile, 'pw', TEST_KEYS);
    try {
      version11Code();
      let engine = await createEngine(config);
      const sessionsOf: Record<string, string[]> = {};
      const before: Record<string, Awaited<ReturnType<typeof reads>>> = {};
      let dump: Record<string, string>;
      try {
        expect(await versions(engine)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        const oldKeys = await keys(engine);
        expect(oldKeys).toContain('sessions sessions_id_key UNIQUE (id)');
        for (const subject of ['alice', 'bob']) await engine.subjects.create(subject);
        // calibration is per instrument, for every subject
        await engine.subject('alice').probes.calibrate();
        for (const subject of ['alice', 'bob']) {
          const me = engine.subject(subject);
          await me.owner.setKey({ publicKeyPem: signer.publicKeyPem, keyId: signer.keyId });
          const s1 = await me.sessions.create({ id: `${subject}-s1`, title: 'first' });
          const s2 = await me.sessions.create();
          sessionsOf[subject] = [s1.id, s2.id];
          await me.turns.add({
            sessionId: s1.id,
            role: 'user',
            content: 'I play the cello in an orchestra. I read on my phone.',
          });
          await me.turns.add({
            sessionId: s1.id,
            role: 'assistant',
            content: 'I emailed the rehearsal plan.',
            receipt: { tools: ['send_email'], sources: ['msg-1'] },
          });
          await me.turns.add({
            sessionId: s1.id,
            role: 'user',
            content: 'Title: cello chat',
            utility: true,
          });
          await me.turns.add({
            sessionId: s2.id,
            role: 'user',
            content: 'Now I read on a laptop.',
          });
          const first = await me.gate.propose({
            sessionId: s1.id,
            proposals: [
              {
                slot: 'what_i_know_about_user',
                text: 'The user plays the cello.',
                origin: 'saw',
                evidence: { turn: 1, quote: 'I play the cello' },
              },
              {
                slot: 'stances',
                key: 'device',
                text: 'The user reads on a phone.',
                origin: 'saw',
                evidence: { turn: 1, quote: 'I read on my phone' },
              },
              {
                slot: 'what_i_know_about_user',
                text: 'The user is in an orchestra.',
                origin: 'saw',
                evidence: { turn: 1, quote: 'in an orchestra' },
              },
              // dropped: no such words in the turn
              {
                slot: 'what_i_know_about_user',
                text: 'The user plays the drums.',
                origin: 'saw',
                evidence: { turn: 1, quote: 'I play the drums' },
              },
            ],
          });
          expect(first.proposed).toHaveLength(3);
          expect(first.dropped).toHaveLength(1);
          const [cello, phone, orchestra] = first.proposed.map((p) => p.id) as [
            FactId,
            FactId,
            FactId,
          ];
          for (const id of [cello, phone, orchestra]) {
            await me.owner.decide({ proposalId: id as FactId, decision: 'approve', signer });
          }
          const second = await me.gate.propose({
            sessionId: s2.id,
            proposals: [
              {
                slot: 'stances',
                key: 'device',
                text: 'The user reads on a laptop.',
                origin: 'saw',
                evidence: { turn: 1, quote: 'I read on a laptop' },
              },
            ],
          });
          const laptop = second.proposed[0]?.id ?? '';
          expect(
            (await me.owner.decide({ proposalId: laptop as FactId, decision: 'approve', signer }))
              .superseded,
          ).toBe(phone);
          // a proposal left in the pile
          await me.gate.propose({
            sessionId: s2.id,
            proposals: [
              {
                slot: 'what_i_know_about_user',
                text: 'The user has a laptop.',
                origin: 'saw',
                evidence: { turn: 1, quote: 'a laptop' },
              },
            ],
          });

          // one retraction stands by a probe, one is overturned by it (the fact restored)
          writeFileSync(join(probeDir, `${subject}.txt`), 'cello on Tuesdays');
          const falsifier = {
            stoodOn: 'the first turn',
            whyWrong: 'the note file says otherwise',
            corrected: 'see the note file',
            procedure: `read ${subject}.txt`,
            passObservation: 'the file mentions the cello',
            overturnCondition: 'the file does not mention it',
            dueDays: 0,
          };
          const stands = await me.ledger.retract({
            claim: 'The user plays the cello.',
            ...falsifier,
            factId: cello as FactId,
            signer,
            probe: {
              spec: { kind: 'file', path: `${subject}.txt`, mode: 'contains', needle: 'cello' },
              standsIf: 'verified',
              overturnsIf: 'falsified',
            },
          });
          const overturned = await me.ledger.retract({
            claim: 'The user is in an orchestra.',
            ...falsifier,
            factId: orchestra as FactId,
            signer,
            probe: {
              spec: { kind: 'file', path: `${subject}.txt`, mode: 'contains', needle: 'violin' },
              standsIf: 'verified',
              overturnsIf: 'falsified',
            },
          });
          await me.ledger.retract({ claim: 'An unsettled claim.', ...falsifier });
          now = new Date(now.getTime() + DAY);
          expect(
            (await me.ledger.settle({ retractionId: stands.id, runProbe: true })).verdict,
          ).toBe('stands');
          const restored = await me.ledger.settle({ retractionId: overturned.id, runProbe: true });
          expect(restored.verdict).toBe('overturned');
          expect(restored.restoredFactId).not.toBeNull();
          await me.probes.run({ kind: 'file', path: `${subject}.txt`, mode: 'exists' });

          await me.commitments.add({ title: 'practise scales', due: '2026-11-09' });
          const done = await me.commitments.add({ title: 'buy rosin' });
          await me.commitments.done(done.id);
          await me.actions.record({
            tool: 'send_email',
            surface: 'chat',
            target: 'rehearsal plan',
            completedAt: now,
          });
          await me.tools.register({ name: 'send_email', surfaces: ['chat'] });
          await me.arrival.assemble({ surface: 'chat', sessionId: s1.id });
          now = new Date(now.getTime() + 60_000);
          await me.arrival.assemble({ surface: 'chat', sessionId: s2.id });
          before[subject] = await reads(engine, me, sessionsOf[subject] ?? []);
        }
        // what is compared is not empty (a read that saw nothing would compare equal)
        for (const subject of ['alice', 'bob']) {
          const b = before[subject];
          // four decisions and the owner's two signed retractions
          expect(b?.chain).toMatchObject({ ok: true, length: 6 });
          expect(b?.live.map((f) => f.text).sort()).toEqual([
            'The user is in an orchestra.',
            'The user reads on a laptop.',
          ]);
          expect(b?.all.map((f) => f.status).sort()).toEqual([
            'active',
            'active',
            'proposed',
            'retracted',
            'retracted',
            'superseded',
          ]);
          expect(b?.perSession.map((p) => p.turns.length)).toEqual([2, 1]);
          expect(b?.perSession[0]?.usage).toHaveLength(1);
          expect(b?.pile).toHaveLength(1);
          expect(b?.dropped).toHaveLength(1);
          expect(b?.log).toHaveLength(3);
          expect(b?.commitments).toHaveLength(2);
          expect(b?.tools).toHaveLength(1);
          expect(b?.diff.from).not.toBeNull();
          expect(b?.recall.length).toBeGreaterThan(0);
        }
        expect(before.alice?.ledger.map((r) => r.verdict).sort()).toEqual([
          'overturned',
          'stands',
          'unchecked',
        ]);
        dump = await dumpStore(engine);
        // what a version before subject handles wrote: a probe run for no subject
        await storeClient(engine).query(
          `INSERT INTO probe_records (id, subject_id, instrument, kind, spec, verdict, evidence,
             calibrated, ran_at)
           VALUES ('no-subject', NULL, 'file', 'file', '{}'::jsonb, 'verified', '{}'::jsonb,
                   false, now())`,
        );
      } finally {
        await engine.close();
      }

      upgradeCode();
      engine = await createEngine({ ...config, create: false });
      try {
        expect(await versions(engine)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
        // the same rows in every table (the record of no subject gone, and nothing else)
        const after = await dumpStore(engine);
        const withoutMigrations = (d: Record<string, string>) =>
          Object.fromEntries(Object.entries(d).filter(([table]) => table !== 'schema_migrations'));
        expect(withoutMigrations(after)).toEqual(withoutMigrations(dump));
        expect(Object.keys(after).length).toBeGreaterThan(20);
        for (const subject of ['alice', 'bob']) {
          const me = engine.subject(subject);
          expect(await reads(engine, me, sessionsOf[subject] ?? [])).toEqual(before[subject]);
        }

        // the new keys
        const newKeys = await keys(engine);
        for (const gone of [
          'sessions_id_key',
          'turns_id_key',
          'facts_id_key',
          'dropped_proposals_id_key',
          'retractions_id_key',
          'commitments_id_key',
          'actions_id_key',
          'arrival_manifests_id_key',
          'probe_records_seq_key',
        ]) {
          expect(newKeys.filter((k) => k.split(' ')[1] === gone)).toEqual([]);
        }
        expect(newKeys).toEqual(
          expect.arrayContaining([
            'turns turns_subject_id_id_key UNIQUE (subject_id, id)',
            'probe_records probe_records_pkey PRIMARY KEY (subject_id, id)',
            'facts facts_evidence_turn_id_fkey FOREIGN KEY (subject_id, evidence_turn_id) REFERENCES turns(subject_id, id)',
            'facts facts_retraction_id_fkey FOREIGN KEY (subject_id, retraction_id) REFERENCES retractions(subject_id, id)',
            'retractions retractions_settled_probe_record_id_fkey FOREIGN KEY (subject_id, settled_probe_record_id) REFERENCES probe_records(subject_id, id)',
          ]),
        );
        const db = storeClient(engine);
        // the append-only guards still refuse, the probe log's among them (lifted for the
        // deletion only)
        await expect(db.query(`DELETE FROM probe_records`)).rejects.toThrow(/append-only/);
        await expect(db.query(`UPDATE turns SET content = 'x'`)).rejects.toThrow(/append-only/);
        await expect(db.query(`DELETE FROM facts`)).rejects.toThrow(/never deleted/);
        await expect(
          db.query(`INSERT INTO probe_records (id, subject_id, instrument, kind, spec, verdict,
                      evidence, calibrated, ran_at)
                    VALUES ('x', NULL, 'file', 'file', '{}', 'verified', '{}', false, now())`),
        ).rejects.toThrow(/null value/);

        // and the store keeps working: the same session id for a third subject, a new turn
        await engine.subjects.create('carol');
        const carol = engine.subject('carol');
        await carol.sessions.create({ id: 'alice-s1' });
        await carol.turns.add({ sessionId: 'alice-s1', role: 'user', content: 'Hello.' });
        expect(await engine.subject('alice').history.turns('alice-s1')).toEqual(
          before.alice?.perSession[0]?.turns,
        );
      } finally {
        await engine.close();
      }
    } finally {
      version11Code();
      await store.drop();
    }
  });

  it('refuses a store whose fact cites another subject’s turn, and leaves it at 11 (negative control)', async () => {
    const store = location(kind, 'crossed');
    try {
      version11Code();
      let engine = await createEngine({ db: store.db });
      try {
        for (const subject of ['alice', 'bob']) {
          await engine.subjects.create(subject);
          const s = await engine.subject(subject).sessions.create({ id: `${subject}-s` });
          await engine.subject(subject).turns.add({
            sessionId: s.id,
            role: 'user',
            content: `I am ${subject}.`,
          });
        }
        const db = storeClient(engine);
        await db.query(
          `INSERT INTO facts (subject_id, id, slot, text, origin, status, attested,
             evidence_turn_id, proposed_by, recorded_at, status_at, terms)
           SELECT 'alice', 'crossed', 'what_i_know_about_user', 'x', 'saw', 'proposed', false,
                  t.id, 'test', now(), now(), '{}'
           FROM turns t WHERE t.subject_id = 'bob'`,
        );
      } finally {
        await engine.close();
      }
      upgradeCode();
      const err = await createEngine({ db: store.db, create: false }).then(
        async (e) => {
          await e.close();
          return null;
        },
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(EngineError);
      expect((err as EngineError).code).toBe('DB_UNUSABLE');
      expect((err as EngineError).message).toMatch(/facts_evidence_turn_id_fkey/);
      // rolled back whole: still 11, the old keys in place
      version11Code();
      engine = await createEngine({ db: store.db, create: false });
      try {
        expect(await versions(engine)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        expect(await keys(engine)).toContain('sessions sessions_id_key UNIQUE (id)');
      } finally {
        await engine.close();
      }
    } finally {
      version11Code();
      await store.drop();
    }
  });
});
