// A kept trust view outlives the engine's own turns and arrival manifests (issue 15: an arrival
// right after a turn must not scan the chain and the facts again), and nothing else: any other
// transaction that ends sends the next read to the full check. Each case counts the statements
// a read runs (one: the snapshot; none: the snapshot came with the request's own read, as an
// arrival's opening carries it; more: the probe), with negative controls, and the attack a
// process with the store can mount through the engine's own turn transaction.
import { describe, expect, it } from 'vitest';
import { createNodeChainCrypto } from '../src/crypto/chain-crypto.js';
import { rememberingVerifier } from '../src/domain/decision-chain.js';
import type { ServerSnapshot } from '../src/domain/trust.js';
import { storeClient } from '../src/engine/test-access.js';
import { createTrustVerifier, NEUTRAL_PROBE_AFTER_MS } from '../src/trust/trust-verifier.js';
import { TurnRecorder } from '../src/history/turn-recorder.js';
import { ArrivalSql } from '../src/store/arrival-sql.js';
import {
  endedBetween,
  NeutralWrites,
  parseSnapshot,
  sawEverything,
  type XactSnapshot,
} from '../src/trust/neutral-writes.js';
import type { SqlClient, SqlExecutor } from '../src/store/sql-client.js';
import { TrustSql } from '../src/trust/trust-sql.js';
import { TurnSql } from '../src/store/turn-sql.js';
import { UsageSql } from '../src/store/usage-sql.js';
import { QUIET_RUN, quietEngines } from './support/engines.js';
import {
  proposeNights,
  TEXTS,
  trustFixture,
  trustStoreFor,
  type TrustFixture,
} from './support/trust-fixture.js';

const snap = (text: string): XactSnapshot => {
  const s = parseSnapshot(text);
  if (s === null) throw new Error(`not a snapshot: ${text}`);
  return s;
};

/** A NeutralWrites on server run 'run-1' (a run named first forgets what was noted before). */
function onRun1(capacity?: number): NeutralWrites {
  const w = new NeutralWrites(capacity);
  w.run('run-1');
  return w;
}

if (!QUIET_RUN) {
  describe('which transactions ended between two snapshots', () => {
    it('reads pg_current_snapshot text, and refuses what is not one', () => {
      expect(snap('10:14:11,12')).toEqual({ xmin: 10n, xmax: 14n, xip: new Set([11n, 12n]) });
      expect(snap('10:10:')).toEqual({ xmin: 10n, xmax: 10n, xip: new Set() });
      for (const bad of ['', '10:9:', '10:14:9', '10:14:14', '10:14:a', '10-14-', '1:2:3:4']) {
        expect(parseSnapshot(bad), bad).toBeNull();
      }
    });

    it('names the ones in progress then and ended since, and the ones that began and ended since', () => {
      // 11 and 12 were running; 14 and 15 began later; 12 and 15 are still running
      expect(endedBetween(snap('10:14:11,12'), snap('12:16:12,15'), 100)).toEqual([11n, 14n]);
      // nothing ended: the same snapshot
      expect(endedBetween(snap('10:14:11,12'), snap('10:14:11,12'), 100)).toEqual([]);
      // a later snapshot that is not later, or too many ids to look at, is not answered
      expect(endedBetween(snap('10:14:'), snap('10:13:'), 100)).toBeNull();
      expect(endedBetween(snap('10:14:'), snap('9:14:'), 100)).toBeNull();
      expect(endedBetween(snap('10:14:'), snap('10:200:'), 100)).toBeNull();
    });

    it('says a snapshot saw everything an earlier one saw ended, and not when it did not', () => {
      // the same, and later ones (11 ended, 14 began and ended, 12 and 15 still running)
      expect(sawEverything('10:14:11,12', '10:14:11,12')).toBe(true);
      expect(sawEverything('12:16:12,15', '10:14:11,12')).toBe(true);
      expect(sawEverything('16:16:', '10:14:11,12')).toBe(true);
      // negative controls: the earlier one saw 11 ended, the other lists it as running; an xmax
      // below the earlier one's; the two the other way round; an unreadable snapshot
      expect(sawEverything('10:16:11', '12:14:')).toBe(false);
      expect(sawEverything('10:13:', '10:14:')).toBe(false);
      expect(sawEverything('10:14:11,12', '12:16:12,15')).toBe(false);
      expect(sawEverything('not a snapshot', '10:14:')).toBe(false);
      expect(sawEverything('10:14:', '')).toBe(false);
    });

    it('says only-these when every ended transaction was noted, and not otherwise', () => {
      const w = onRun1();
      w.add('11');
      w.add('14');
      expect(w.onlyThese('10:14:11,12', '12:16:12,15', 'run-1')).toBe(true);
      // negative controls: one ended transaction that was not noted, an unreadable snapshot
      expect(onRun1().onlyThese('10:14:11,12', '12:16:12,15', 'run-1')).toBe(false);
      const one = onRun1();
      one.add('11');
      expect(one.onlyThese('10:14:11,12', '12:16:12,15', 'run-1')).toBe(false);
      expect(w.onlyThese('10:14:11,12', 'not a snapshot', 'run-1')).toBe(false);
      // what is not an xid is not noted
      const junk = onRun1();
      junk.add('14; DROP TABLE facts');
      junk.add('');
      junk.add(null);
      expect(junk.onlyThese('14:15:14', '15:15:', 'run-1')).toBe(false);
    });

    it('forgets every noted xid when the server run changes (a crash restart, a failover)', () => {
      const w = onRun1();
      w.add('11');
      w.add('14');
      expect(w.onlyThese('10:14:11,12', '12:16:12,15', 'run-1')).toBe(true);
      // the same ids on another run of the server may name other transactions
      expect(w.onlyThese('10:14:11,12', '12:16:12,15', 'run-2')).toBe(false);
      expect(w.onlyThese('10:14:11,12', '12:16:12,15', 'run-2')).toBe(false);
      // and nothing carries back to the first run either
      expect(w.onlyThese('10:14:11,12', '12:16:12,15', 'run-1')).toBe(false);
      // what was noted before any run was named is forgotten when one is
      const early = new NeutralWrites();
      early.add('11');
      early.add('14');
      early.run('run-1');
      expect(early.onlyThese('10:14:11,12', '12:16:12,15', 'run-1')).toBe(false);
    });

    it('forgets the oldest past its capacity (a forgotten one is a write like any other)', () => {
      const w = onRun1(2);
      w.add('11');
      w.add('12');
      w.add('13');
      expect(w.onlyThese('12:14:12,13', '14:14:', 'run-1')).toBe(true);
      expect(w.onlyThese('11:14:11,12,13', '14:14:', 'run-1')).toBe(false);
    });
  });
}

/** The store's client, with every statement it runs counted (the verifier is given this one). */
function counting(client: SqlClient): { client: SqlClient; statements: () => number } {
  let n = 0;
  const counted = (db: SqlExecutor): SqlExecutor => ({
    query: (sql, params, options) => {
      n++;
      return db.query(sql, params, options);
    },
    exec: (sql) => {
      n++;
      return db.exec(sql);
    },
  });
  return {
    client: {
      ...counted(client),
      kind: client.kind,
      location: client.location,
      capabilities: client.capabilities,
      transaction: (fn) => client.transaction((tx) => fn(counted(tx))),
      close: () => client.close(),
    },
    statements: () => n,
  };
}

describe.each(quietEngines())('a kept trust view and the engine’s own writes [%s]', (kind) => {
  // each test's fixture is a fresh subject of one store; a test that changes what every
  // subject shares (a table, a constraint, a trigger) has a store of its own
  const store = trustStoreFor(kind);
  let f: TrustFixture | null = null;

  /** A verifier, a turn recorder and a manifest writer sharing one NeutralWrites, as createTrust and its hook wire them. */
  async function setUp(fixture: TrustFixture, clock: () => Date = () => new Date()) {
    const raw = storeClient(fixture.engine);
    const { client, statements } = counting(raw);
    const neutral = new NeutralWrites();
    const t = createTrustVerifier({
      client,
      crypto: rememberingVerifier(createNodeChainCrypto()),
      clock,
      neutral,
    });
    let ids = 0;
    const recorder = (notes: NeutralWrites | undefined) =>
      new TurnRecorder({
        turns: new TurnSql(raw),
        usage: new UsageSql(raw),
        clock: () => new Date(),
        newId: () => `neutral-turn-${++ids}`,
        ...(notes === undefined ? {} : { wroteNeutral: (xid) => notes.add(xid) }),
      });
    const turn = (notes: NeutralWrites | undefined) =>
      recorder(notes).add(fixture.subject, {
        sessionId: fixture.sessionId,
        role: 'user',
        content: 'Nothing to remember here.',
      });
    const manifests = new ArrivalSql(raw);
    const manifest = async () =>
      neutral.add(
        await manifests.recordManifest({
          id: `neutral-manifest-${++ids}`,
          subjectId: fixture.subject,
          surface: 'chat',
          sessionId: null,
          blocks: [],
          tools: [],
          toolCount: 0,
          degraded: [],
          totalChars: 0,
          createdAt: new Date(),
          chain: null,
        }),
      );
    /** The view, and how many statements reading it took. */
    const read = async () => {
      const before = statements();
      const view = await t.view(fixture.subject);
      return { view, statements: statements() - before };
    };
    return { t, neutral, turn, manifest, read, statements };
  }

  it('turns and manifests the engine noted keep the view at one statement; a turn it did not note sends the read to the probe', async () => {
    f = await store.fixture();
    const s = await setUp(f);
    const first = await s.t.view(f.subject);
    // negative control for the count: nothing written, one statement (the snapshot)
    expect(await s.read()).toEqual({ view: first, statements: 1 });
    await s.turn(s.neutral);
    await s.manifest();
    await s.turn(s.neutral);
    expect(await s.read()).toEqual({ view: first, statements: 1 });
    // a turn written the same way but not noted: the full check runs, finds nothing that
    // matters, and keeps the view
    await s.turn(undefined);
    const probed = await s.read();
    expect(probed.view).toBe(first);
    expect(probed.statements).toBeGreaterThan(1);
    // ...and moves it on: the next read after a noted turn is one statement again
    await s.turn(s.neutral);
    expect(await s.read()).toEqual({ view: first, statements: 1 });
  });

  it('past NEUTRAL_PROBE_AFTER_MS since the probe last ran, a noted turn no longer spares it', async () => {
    f = await store.fixture();
    let now = Date.now();
    const s = await setUp(f, () => new Date(now));
    const first = await s.t.view(f.subject);
    await s.turn(s.neutral);
    expect(await s.read()).toEqual({ view: first, statements: 1 });
    now += NEUTRAL_PROBE_AFTER_MS + 1;
    await s.turn(s.neutral);
    const late = await s.read();
    expect(late.view).toBe(first);
    expect(late.statements).toBeGreaterThan(1);
    // the probe found it unchanged: the next noted turn is spared again
    await s.turn(s.neutral);
    expect(await s.read()).toEqual({ view: first, statements: 1 });
  });

  it('a change to a fact after the engine’s own turns is seen at the next read', async () => {
    f = await store.fixture();
    const s = await setUp(f);
    const first = await s.t.view(f.subject);
    await s.turn(s.neutral);
    await f.tamper([`UPDATE facts SET text = $2 WHERE id = $1`], [f.ids.city, TEXTS.forged]);
    await s.manifest();
    const after = await s.read();
    expect(after.view).not.toBe(first);
    expect(after.view.live.map((x) => x.text)).not.toContain(TEXTS.forged);
    expect(after.view.withheld.map((w) => [w.fact.id, w.code])).toEqual([
      [f.ids.city, 'CONTENT_CHANGED'],
    ]);
  });

  it.each(['the next write the engine did not note', 'NEUTRAL_PROBE_AFTER_MS later'] as const)(
    'a fact edited inside the engine’s own turn transaction (a trigger planted on turns) is never shown, and is withheld at %s',
    async (found) => {
      f = await trustFixture(kind);
      let now = Date.now();
      const s = await setUp(f, () => new Date(now));
      const first = await s.t.view(f.subject);
      expect(first.live.map((x) => x.text)).toContain(TEXTS.city);
      // a process with the store's SQL: the facts' guard off, and a trigger that rewrites an
      // approved fact in the same transaction as every turn the engine records
      await f.tamper([
        `ALTER TABLE facts DISABLE TRIGGER USER`,
        `CREATE FUNCTION forge_on_turn() RETURNS trigger LANGUAGE plpgsql AS $fn$
         BEGIN
           UPDATE facts SET text = '${TEXTS.forged}' WHERE subject_id = '${f.subject}' AND id = '${f.ids.city}';
           RETURN NULL;
         END $fn$`,
        `CREATE TRIGGER forge_on_turn AFTER INSERT ON turns FOR EACH ROW EXECUTE FUNCTION forge_on_turn()`,
      ]);
      // the view the tamper's own transaction sent to the probe: nothing it reads changed yet
      const kept = (await s.read()).view;
      expect(kept.live.map((x) => x.text)).toContain(TEXTS.city);
      await s.turn(s.neutral);
      const { rows } = await storeClient(f.engine).query<{ text: string }>(
        `SELECT text FROM facts WHERE subject_id = '${f.subject}' AND id = $1`,
        [f.ids.city],
      );
      expect(rows[0]?.text).toBe(TEXTS.forged);
      // the kept view, returned after one statement, is what the owner's signatures verified:
      // never the forged text
      const during = await s.read();
      expect(during.statements).toBe(1);
      expect(during.view.live.map((x) => x.text)).not.toContain(TEXTS.forged);
      if (found === 'NEUTRAL_PROBE_AFTER_MS later') {
        now += NEUTRAL_PROBE_AFTER_MS + 1;
        await s.turn(s.neutral);
      } else {
        // a pending proposal: a transaction the engine did not note
        await proposeNights(f);
      }
      const after = await s.read();
      expect(after.statements).toBeGreaterThan(1);
      expect(after.view.live.map((x) => x.text)).not.toContain(TEXTS.forged);
      expect(after.view.withheld.map((w) => [w.fact.id, w.code])).toEqual([
        [f.ids.city, 'CONTENT_CHANGED'],
      ]);
    },
  );

  it("a read given its request's snapshot sends no statement when nothing changed; a change before that snapshot is seen", async () => {
    f = await store.fixture();
    const s = await setUp(f);
    const raw = storeClient(f.engine);
    const snapshotNow = () => new TrustSql(raw).snapshot();
    const first = await s.t.view(f.subject);
    const subject = f.subject;
    const given = async (taken: Promise<ServerSnapshot>) => {
      const before = s.statements();
      const view = await s.t.view(subject, taken);
      return { view, statements: s.statements() - before };
    };
    // nothing written: the kept view, and no statement of the verifier's own
    expect(await given(snapshotNow())).toEqual({ view: first, statements: 0 });
    // the engine's own turn: the same
    await s.turn(s.neutral);
    expect(await given(snapshotNow())).toEqual({ view: first, statements: 0 });
    // negative control: a write the engine did not make, committed before the snapshot was
    // taken, sends the read to the probe, which finds the forged text and withholds the fact
    await f.tamper([`UPDATE facts SET text = $2 WHERE id = $1`], [f.ids.city, TEXTS.forged]);
    const after = await given(snapshotNow());
    expect(after.statements).toBeGreaterThan(0);
    expect(after.view.live.map((x) => x.text)).not.toContain(TEXTS.forged);
    expect(after.view.withheld.map((w) => w.fact.id)).toContain(f.ids.city);
  });

  it("a request's snapshot that failed is read again; a read given one is not shared with a later caller", async () => {
    f = await store.fixture();
    const s = await setUp(f);
    const first = await s.t.view(f.subject);
    // the statement that was to carry it failed: the verifier reads the snapshot itself
    let before = s.statements();
    expect(await s.t.view(f.subject, Promise.reject(new Error('the opening read failed')))).toBe(
      first,
    );
    expect(s.statements() - before).toBe(1);
    // a read given a snapshot, held back: a later caller does not join it (its request may
    // have begun after that snapshot was taken) and reads a snapshot of its own
    let release: (v: ServerSnapshot) => void = () => undefined;
    const held = new Promise<ServerSnapshot>((resolve) => (release = resolve));
    before = s.statements();
    const mine = s.t.view(f.subject, held);
    const later = s.t.view(f.subject);
    expect(later).not.toBe(mine);
    release(await new TrustSql(storeClient(f.engine)).snapshot());
    expect(await mine).toBe(first);
    expect(await later).toBe(first);
    // the held snapshot (read above, not through the verifier's client) and the later one's
    expect(s.statements() - before).toBe(1);
    // negative control: two plain reads queued behind a running one share one check
    const running = s.t.view(f.subject, held);
    const a = s.t.view(f.subject);
    const b = s.t.view(f.subject);
    expect(a).toBe(b);
    await Promise.all([running, a, b]);
  });

  it("a request's snapshot older than the one the kept view holds at is served by the view, with no statement", async () => {
    f = await store.fixture();
    const s = await setUp(f);
    const raw = storeClient(f.engine);
    const first = await s.t.view(f.subject);
    // taken as a request began; then a write the engine did not make, seen by a plain read,
    // which builds the view again at a later snapshot
    const early = await new TrustSql(raw).snapshot();
    await f.tamper([`UPDATE facts SET text = $2 WHERE id = $1`], [f.ids.city, TEXTS.forged]);
    const rebuilt = await s.t.view(f.subject);
    expect(rebuilt).not.toBe(first);
    // the request's older snapshot: the newer view holds at one that saw all it saw
    const before = s.statements();
    expect(await s.t.view(f.subject, Promise.resolve(early))).toBe(rebuilt);
    expect(s.statements() - before).toBe(0);
    expect(rebuilt.live.map((x) => x.text)).not.toContain(TEXTS.forged);
  });

  it('through the engine: an arrival after a recorded turn runs no chain probe; after another write it does', async () => {
    f = await store.fixture();
    const raw = storeClient(f.engine);
    const query = raw.query.bind(raw);
    let probes = 0;
    let snapshots = 0;
    // the probe's statements (and only they) count row versions from the snapshot's xmin; the
    // snapshot statement of the verifier's own is sent only when the opening's did not serve
    raw.query = ((sql: string, params?: readonly unknown[], options?: object) => {
      if (sql.includes('pg_snapshot_xmin')) probes++;
      if (sql.startsWith('SELECT pg_catalog.pg_current_snapshot()')) snapshots++;
      return query(sql, params, options);
    }) as SqlClient['query'];
    const arrive = async () => {
      const before = probes;
      const a = await f!.me.arrival.assemble({
        surface: 'chat',
        sessionId: f!.sessionId,
        message: 'Where do I live?',
      });
      return { a, probes: probes - before };
    };
    await arrive();
    // a second arrival: only the first one's manifest was written since; the opening read
    // carried the snapshot the view was checked against
    snapshots = 0;
    expect((await arrive()).probes).toBe(0);
    expect(snapshots).toBe(0);
    await f.me.turns.add({ sessionId: f.sessionId, role: 'user', content: 'Where do I live?' });
    const afterTurn = await arrive();
    expect(afterTurn.probes).toBe(0);
    expect(afterTurn.a.text).toContain(TEXTS.city);
    // negative control: a write the engine did not make
    await f.tamper([`UPDATE facts SET text = $2 WHERE id = $1`], [f.ids.city, TEXTS.forged]);
    const afterTamper = await arrive();
    expect(afterTamper.probes).toBeGreaterThan(0);
    expect(afterTamper.a.text).not.toContain(TEXTS.forged);
    expect(afterTamper.a.text).not.toContain(TEXTS.city);
    expect(afterTamper.a.blocks.find((b) => b.name === 'integrity')?.text).toContain(
      'failed verification',
    );
  });
});
