// Issue 12: a read keeps its trust view only while the rows it was built from are the same row
// versions. Each test keeps a view, changes what a process with the store could change, and
// asserts the very next read sees it; the negative controls show an unchanged store gives back
// the kept view (so the changes, not a cold cache, are what the reads see).
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createNodeChainCrypto } from '../src/crypto/chain-crypto.js';
import { rememberingVerifier } from '../src/domain/decision-chain.js';
import { storeClient } from '../src/engine/test-access.js';
import { createTrustVerifier, type TrustVerifier } from '../src/trust/trust-verifier.js';
import { PG_URL, QUIET_RUN, quietEngines } from './support/engines.js';
import {
  proposeNights,
  TEXTS,
  trustFixture,
  trustStoreFor,
  type TrustFixture,
} from './support/trust-fixture.js';
import type { FactId } from '../src/index.js';

/** A verifier over the fixture's store, made as the engine makes its own, with its own clock. */
function verifierOf(f: TrustFixture, opts: { clock?: () => Date; rebaseAfter?: number } = {}) {
  return createTrustVerifier({
    client: storeClient(f.engine),
    crypto: rememberingVerifier(createNodeChainCrypto()),
    clock: opts.clock ?? (() => new Date()),
    ...(opts.rebaseAfter === undefined ? {} : { rebaseAfter: opts.rebaseAfter }),
  });
}

const liveTexts = async (t: TrustVerifier, subject: string) =>
  (await t.view(subject)).live.map((x) => x.text);
/** The fixture's three live facts, in a fixed order (two share a recorded time). */
const FIXTURE_LIVE = [TEXTS.city, TEXTS.job, TEXTS.email].sort();
const sorted = (texts: string[]) => [...texts].sort();

describe.each(quietEngines())('the kept trust view [%s]', (kind) => {
  // each test's fixture is a fresh subject of one store; a test that changes what every
  // subject shares (a table, a constraint, a trigger) has a store of its own
  const store = trustStoreFor(kind);
  let f: TrustFixture | null = null;

  it('an unchanged store gives back the kept view; any change to a fact builds it again', async () => {
    f = await store.fixture();
    const t = verifierOf(f);
    const first = await t.view(f.subject);
    expect(sorted(first.live.map((x) => x.text))).toEqual(FIXTURE_LIVE);
    // negative control: nothing changed, the same view
    expect(await t.view(f.subject)).toBe(first);
    // a new pending proposal is not something a view shows: the kept view still holds
    const pending = await proposeNights(f);
    expect(await t.view(f.subject)).toBe(first);
    // ...until it is flipped to active in the store (a row written after the view, that did not
    // matter when it was written)
    const pendingId = pending.proposed[0]?.id ?? '';
    await f.tamper([`UPDATE facts SET status = 'active' WHERE id = $1`], [pendingId]);
    const flipped = await t.view(f.subject);
    expect(flipped).not.toBe(first);
    expect(flipped.live.map((x) => x.text)).not.toContain('The user works nights.');
    expect(flipped.withheld.map((w) => [w.fact.id, w.code])).toEqual([
      [pendingId, 'MISSING_DECISION'],
    ]);
    await f.tamper([`UPDATE facts SET status = 'proposed' WHERE id = $1`], [pendingId]);
    expect((await t.view(f.subject)).withheld).toEqual([]);

    // an approved text edited: the next read withholds it
    await f.tamper([`UPDATE facts SET text = $2 WHERE id = $1`], [f.ids.city, TEXTS.forged]);
    const edited = await t.view(f.subject);
    expect(edited).not.toBe(first);
    expect(edited.live.map((x) => x.text)).not.toContain(TEXTS.forged);
    expect(edited.withheld.map((w) => [w.fact.id, w.code])).toEqual([
      [f.ids.city, 'CONTENT_CHANGED'],
    ]);
    expect(await t.view(f.subject)).toBe(edited);

    // a pending proposal flipped to active (a row entering what the view reads)
    await f.tamper([`UPDATE facts SET status = 'active' WHERE id = $1`], [f.ids.sister]);
    expect(await liveTexts(t, f.subject)).not.toContain(TEXTS.sister);
    expect((await t.view(f.subject)).withheld.map((w) => w.fact.id)).toContain(f.ids.sister);

    // an approved fact flipped back to the pile (a row leaving it): named, not silently gone
    await f.tamper([`UPDATE facts SET status = 'proposed' WHERE id = $1`], [f.ids.job]);
    const left = await t.view(f.subject);
    expect(left.live.map((x) => x.text)).not.toContain(TEXTS.job);
    expect(left.unexplained.map((u) => [u.id, u.status])).toEqual([[f.ids.job, 'proposed']]);
  });

  it('pending proposals written since a kept view are checked one by one, up to a bound', async () => {
    f = await store.fixture();
    const t = verifierOf(f, { rebaseAfter: 1 });
    const first = await t.view(f.subject);
    const propose = (key: string) =>
      f?.me.gate.propose({
        sessionId: f.sessionId,
        proposals: [
          {
            slot: 'what_i_know_about_user',
            key,
            text: `The user works nights (${key}).`,
            origin: 'saw',
            evidence: { turn: 1, quote: 'I work night shifts' },
          },
        ],
      });
    await propose('a');
    expect(await t.view(f.subject)).toBe(first);
    await propose('b');
    // two rows written since the view, past the bound of one: built again, from a newer snapshot
    const again = await t.view(f.subject);
    expect(again).not.toBe(first);
    expect(sorted(again.live.map((x) => x.text))).toEqual(FIXTURE_LIVE);
    expect(await t.view(f.subject)).toBe(again);
  });

  it('a deleted fact and a re-inserted copy of it are both seen', async () => {
    f = await store.fixture();
    const t = verifierOf(f);
    const first = await t.view(f.subject);
    // the same row put back as it was: a new row version, so a new view, and still backed
    await f.tamper([
      `CREATE TABLE keep_row AS SELECT * FROM facts WHERE id = '${f.ids.city}'`,
      `DELETE FROM facts WHERE id = '${f.ids.city}'`,
    ]);
    const gone = await t.view(f.subject);
    expect(gone).not.toBe(first);
    expect(gone.live.map((x) => x.text)).not.toContain(TEXTS.city);
    expect(gone.unexplained.map((u) => u.id)).toEqual([f.ids.city]);
    await f.tamper([`INSERT INTO facts SELECT * FROM keep_row`, `DROP TABLE keep_row`]);
    const back = await t.view(f.subject);
    expect(back).not.toBe(gone);
    expect(sorted(back.live.map((x) => x.text))).toEqual(FIXTURE_LIVE);
    expect(back.unexplained).toEqual([]);
  });

  it('a link edited in place after many more were verified is found at the next read', async () => {
    f = await store.fixture();
    // rebase after every link written since the state was built: the check then counts from a
    // newer snapshot, and an edit of an old link must still be found
    const t = verifierOf(f, { rebaseAfter: 0 });
    expect((await t.view(f.subject)).chain.verified).toBe(3);
    await f.me.owner.decide({ proposalId: f.ids.sister, decision: 'approve', signer: f.signer });
    const four = await t.view(f.subject);
    expect(four.chain).toMatchObject({ verified: 4, broken: null });
    expect(four.live.map((x) => x.text)).toContain(TEXTS.sister);
    expect(await t.view(f.subject)).toBe(four);
    await f.tamper([
      `UPDATE decisions SET note = 'edited' WHERE subject_id = '${f.subject}' AND seq = 2`,
    ]);
    const edited = await t.view(f.subject);
    expect(edited.chain.broken).toMatchObject({ brokenAt: 2, code: 'HASH_MISMATCH' });
    expect(edited.live.map((x) => x.text)).not.toContain(TEXTS.city);
    expect(edited.live.map((x) => x.text)).not.toContain(TEXTS.sister);
  });

  it('a stray link before the first is a broken chain, not a rebuild on every read', async () => {
    f = await trustFixture(kind);
    const t = verifierOf(f);
    await t.view(f.subject);
    await f.tamper([
      `ALTER TABLE decisions DROP CONSTRAINT IF EXISTS decisions_seq_check`,
      `INSERT INTO decisions SELECT subject_id, 0, proposal_id, content_hash, decision, decided_at,
         note, key_id, prev_hash, hash, signature FROM decisions WHERE subject_id = '${f.subject}' AND seq = 2`,
    ]);
    const v = await t.view(f.subject);
    expect(v.chain.broken).toMatchObject({ brokenAt: 0, code: 'SEQ_GAP' });
    expect(v.live.map((x) => x.text)).not.toContain(TEXTS.city);
    expect(await t.view(f.subject)).toBe(v);
  });

  it('a view put in the place of the facts table, with a made-up xmin, is not trusted', async () => {
    f = await trustFixture(kind);
    const t = verifierOf(f);
    await t.view(f.subject);
    await f.tamper([
      `ALTER TABLE facts RENAME TO facts_real`,
      `CREATE VIEW facts AS SELECT r.*, '1'::xid AS xmin FROM facts_real r`,
    ]);
    await t.view(f.subject);
    await f.tamper([`UPDATE facts_real SET text = $2 WHERE id = $1`], [f.ids.city, TEXTS.forged]);
    const v = await t.view(f.subject);
    expect(v.live.map((x) => x.text)).not.toContain(TEXTS.forged);
    // read afresh, the edited approval breaks the chain where it was approved
    expect(v.withheld.map((w) => w.fact.id)).toContain(f.ids.city);
    expect(v.chain.broken).toMatchObject({ brokenAt: 2 });
  });

  it('two rows with one id (the key dropped) are each checked', async () => {
    f = await trustFixture(kind);
    const t = verifierOf(f);
    const first = await t.view(f.subject);
    await f.tamper(
      [
        `ALTER TABLE facts DROP CONSTRAINT facts_pkey CASCADE`,
        `ALTER TABLE facts DROP CONSTRAINT IF EXISTS facts_id_key CASCADE`,
        `INSERT INTO facts SELECT * FROM facts WHERE id = $1`,
        `UPDATE facts SET status = 'active', promoted_by = 'owner', text = $2
         WHERE ctid = (SELECT max(ctid) FROM facts WHERE id = $1)`,
      ],
      [f.ids.sister, TEXTS.forged],
    );
    const v = await t.view(f.subject);
    expect(v).not.toBe(first);
    expect(v.live.map((x) => x.text)).not.toContain(TEXTS.forged);
    expect(v.withheld.map((w) => w.fact.id)).toEqual([f.ids.sister]);
  });

  it('a link with no seq breaks the chain once, not a rebuild on every read', async () => {
    f = await store.fixture();
    const t = verifierOf(f);
    await t.view(f.subject);
    await f.tamper([
      `ALTER TABLE decisions DROP CONSTRAINT decisions_pkey CASCADE`,
      `ALTER TABLE decisions ALTER COLUMN seq DROP NOT NULL`,
      `INSERT INTO decisions SELECT subject_id, NULL, proposal_id, content_hash, decision,
         decided_at, note, key_id, prev_hash, hash, signature
       FROM decisions WHERE subject_id = '${f.subject}' AND seq = 2`,
    ]);
    const v = await t.view(f.subject);
    expect(v.chain.broken).toMatchObject({ brokenAt: 4, code: 'SEQ_GAP' });
    expect(await t.view(f.subject)).toBe(v);
  });

  it('a fact is shown as expired once its valid_to passes, with no change in the store', async () => {
    f = await store.fixture();
    let now = Date.now();
    const t = verifierOf(f, { clock: () => new Date(now) });
    const r = await f.me.gate.propose({
      sessionId: f.sessionId,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          key: 'shift',
          text: 'The user works nights this month.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'I work night shifts' },
          validTo: new Date(now + 3_600_000).toISOString(),
        },
      ],
    });
    const id = r.proposed[0]?.id ?? '';
    await f.me.owner.decide({ proposalId: id as FactId, decision: 'approve', signer: f.signer });
    const before = await t.view(f.subject);
    expect(before.live.map((x) => x.id)).toContain(id);
    expect(await t.view(f.subject)).toBe(before);
    now += 2 * 3_600_000;
    const after = await t.view(f.subject);
    expect(after.live.map((x) => x.id)).not.toContain(id);
    expect(after.expired.map((x) => x.id)).toEqual([id]);
    // a clock set back does not bring back a view built later than it
    now -= 3 * 3_600_000;
    expect(await t.view(f.subject)).not.toBe(after);
  });

  it('a restoration whose original is no longer retracted is withheld', async () => {
    f = await store.fixture();
    const t = verifierOf(f);
    // positive control: the owner's signed retraction of the approved city fact, overturned by a
    // probe and restored as a copy
    const r = await f.me.ledger.retract({
      claim: 'x',
      stoodOn: 'x',
      whyWrong: 'x',
      corrected: 'x',
      procedure: 'x',
      passObservation: 'a',
      overturnCondition: 'b',
      caughtBy: 'owner',
      factId: f.ids.city,
      signer: f.signer,
    });
    await f.tamper(
      [
        `UPDATE retractions SET verdict = 'overturned', settled_at = now(),
           settled_outcome = 'probe said so', settled_by = 'probe',
           settled_probe_record_id = 'record-1', restored_fact_id = 'restored-1'
         WHERE subject_id = '${f.subject}' AND id = '${r.id}'`,
        `INSERT INTO facts (subject_id, id, slot, key, text, origin, status, attested, evidence_turn_id,
           evidence_session_id, evidence_seq, evidence_quote, evidence_tool, proposed_by, valid_from,
           valid_to, recorded_at, status_at, restored_from_id, promoted_by, terms, attestation,
           attestation_reason)
         SELECT subject_id, 'restored-1', slot, key, text, origin, 'active', attested, evidence_turn_id,
           evidence_session_id, evidence_seq, evidence_quote, evidence_tool, 'restoration', valid_from,
           valid_to, now(), now(), id, 'restoration', terms, attestation, attestation_reason
         FROM facts WHERE id = $1`,
      ],
      [f.ids.city],
    );
    const restored = await t.view(f.subject);
    expect(restored.withheld).toEqual([]);
    expect(restored.unexplained).toEqual([]);
    expect(restored.live.map((x) => x.id)).toContain('restored-1');
    // the original set back to the pile, where a kept view would not look
    await f.tamper([`UPDATE facts SET status = 'proposed' WHERE id = $1`], [f.ids.city]);
    const v = await t.view(f.subject);
    expect(v.live.map((x) => x.id)).not.toContain('restored-1');
    expect(v.withheld.find((w) => w.fact.id === 'restored-1')?.reason).toMatch(/not retracted/);
  });

  it('facts.live gives the caller its own array', async () => {
    f = await store.fixture();
    const live = await f.me.facts.live();
    live.splice(0, live.length);
    expect(sorted((await f.me.facts.live()).map((x) => x.text))).toEqual(FIXTURE_LIVE);
  });
});

if (QUIET_RUN) {
  describe('the kept trust view, another connection [postgres]', () => {
    let f: TrustFixture | null = null;
    afterEach(async () => {
      await f?.close();
      f = null;
    });

    it('a write by a transaction that began before the view was kept is seen once it commits', async () => {
      f = await trustFixture('postgres');
      const schema = new URL(f.db).searchParams.get('schema') ?? '';
      const other = new pg.Client({ connectionString: PG_URL });
      await other.connect();
      try {
        await other.query(`SET search_path TO ${schema}`);
        await other.query('BEGIN');
        // the transaction takes its id now, before the view is built: its rows carry that older id
        await other.query('SELECT pg_current_xact_id()');
        const t = verifierOf(f);
        await f.me.owner.decide({ proposalId: f.ids.sister, decision: 'reject', signer: f.signer });
        const kept = await t.view(f.subject);
        expect(kept.live.map((x) => x.text)).not.toContain(TEXTS.sister);
        expect(await t.view(f.subject)).toBe(kept);
        await other.query(`SET LOCAL session_replication_role = replica`);
        await other.query(`UPDATE facts SET status = 'active' WHERE id = $1`, [f.ids.sister]);
        await other.query(`UPDATE facts SET text = $2 WHERE id = $1`, [f.ids.job, TEXTS.forged]);
        await other.query('COMMIT');
        const v = await t.view(f.subject);
        expect(v.live.map((x) => x.text)).not.toContain(TEXTS.sister);
        expect(v.live.map((x) => x.text)).not.toContain(TEXTS.forged);
        expect(v.withheld.map((w) => [w.fact.id, w.code]).sort()).toEqual(
          [
            [f.ids.sister, 'STATUS_MISMATCH'],
            [f.ids.job, 'CONTENT_CHANGED'],
          ].sort(),
        );
      } finally {
        await other.query('ROLLBACK').catch(() => undefined);
        await other.end();
      }
    });
  });
}

if (QUIET_RUN) {
  describe('reads at once on a pool [postgres]', () => {
    let f: TrustFixture | null = null;
    afterEach(async () => {
      await f?.close();
      f = null;
    });

    it('thirty recalls and arrivals at once, more than the pool has connections, all answer', async () => {
      f = await trustFixture('postgres');
      const me = f.me;
      // no read may hold a connection while it waits for the trust view (which needs its own)
      const reads = Array.from({ length: 30 }, (_, i) =>
        i % 3 === 0
          ? me.arrival.assemble({ surface: 'chat' }).then((a) => a.text.includes(TEXTS.city))
          : me.recall
              .search('Lisbon nurse', { kinds: ['fact', 'turn'] })
              .then((items) => items.some((x) => x.text === TEXTS.city)),
      );
      expect(await Promise.all(reads)).toEqual(reads.map(() => true));
    });
  });
}

describe.each(quietEngines())('reads of one subject at once [%s]', (kind) => {
  // each test's fixture is a fresh subject of one store; a test that changes what every
  // subject shares (a table, a constraint, a trigger) has a store of its own
  const store = trustStoreFor(kind);
  let f: TrustFixture | null = null;

  /** The fixture's client, counting statements; the answer of the next one can be held back. */
  function gatedClient(fx: TrustFixture) {
    const client = storeClient(fx.engine);
    let statements = 0;
    let hold: { entered: () => void; released: Promise<void> } | null = null;
    const gated = Object.create(client) as typeof client;
    gated.query = (async (...args: Parameters<typeof client.query>) => {
      statements += 1;
      const h = hold;
      hold = null;
      const result = await client.query(...args);
      if (h !== null) {
        h.entered();
        await h.released;
      }
      return result;
    }) as typeof client.query;
    return {
      client: gated,
      statements: () => statements,
      /** Holds back the next statement's answer; `inside` resolves once it has run. */
      holdNext() {
        let release!: () => void;
        let entered!: () => void;
        const inside = new Promise<void>((r) => (entered = r));
        hold = { entered, released: new Promise<void>((r) => (release = r)) };
        return { inside, release };
      },
    };
  }

  it('share one check while it is queued, and a read that arrives while one runs waits for the next', async () => {
    f = await store.fixture();
    const g = gatedClient(f);
    const t = createTrustVerifier({
      client: g.client,
      crypto: rememberingVerifier(createNodeChainCrypto()),
      clock: () => new Date(),
    });
    const first = await t.view(f.subject);
    // twenty reads at once: one check (one statement: nothing was written), one view for all
    const before = g.statements();
    const subject = f.subject;
    const many = await Promise.all(Array.from({ length: 20 }, () => t.view(subject)));
    expect(g.statements() - before).toBe(1);
    expect(many.every((v) => v === first)).toBe(true);

    // a read has run its check (nothing changed yet); an edit commits; a read that arrives now
    // must not share the running one
    const gate = g.holdNext();
    const running = t.view(f.subject);
    await gate.inside;
    await f.tamper([`UPDATE facts SET text = $2 WHERE id = $1`], [f.ids.city, TEXTS.forged]);
    const later = t.view(f.subject);
    const alsoLater = t.view(f.subject);
    gate.release();
    const [r, l, l2] = await Promise.all([running, later, alsoLater]);
    expect(l).toBe(l2); // the two later reads shared the check queued after the running one
    expect(r).toBe(first);
    expect(l).not.toBe(r);
    expect(l.withheld.map((w) => [w.fact.id, w.code])).toEqual([[f.ids.city, 'CONTENT_CHANGED']]);
    expect(l.live.map((x) => x.text)).not.toContain(TEXTS.forged);
  });
});
