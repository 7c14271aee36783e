import { decidesProposal, type ChainCrypto } from '../domain/decision-chain.js';
import type { Fact } from '../domain/fact.js';
import {
  delegationProblems,
  frozenView,
  judgeFacts,
  wasBacked,
  type ActiveFactEvidence,
  type DepartedFactEvidence,
  type HeadCut,
  type ServerSnapshot,
  type TrustView,
} from '../domain/trust.js';
import { ChainState, factContentHash } from '../domain/chain-state.js';
import {
  anchoredHead,
  anchoredHeadCut,
  anchorKeyMismatch,
  type OwnerAnchor,
} from '../domain/anchor.js';
import { sawEverything, type NeutralWrites } from './neutral-writes.js';
import type { SqlClient, SqlExecutor } from '../store/sql-client.js';
import { TrustSql, type ChainProbe } from './trust-sql.js';
import type { HeldTrust, Trust } from './trust-types.js';

/** The verifier: trust without its full audit (trust.ts adds it). */
export type TrustVerifier = Omit<
  Trust,
  'audit' | 'auditWithin' | 'wroteNeutral' | 'withSubject'
> & {
  withSubject<T>(subjectId: string, fn: (held: Omit<HeldTrust, 'check'>) => Promise<T>): Promise<T>;
};

interface CachedFact {
  version: string;
  evidence: ActiveFactEvidence;
  contentHash: string;
}

/** A trust view, and what must be unchanged for it to hold. */
interface CachedView {
  view: TrustView;
  /** SubjectCache.epoch when it was built. */
  epoch: number;
  /** The xid its mark counts row versions from, and the mark (TrustSql.probe `mark`). */
  since: string;
  mark: string;
  /** The probe's answers the view shows (links stored, the arrivals' head, the key). */
  probeKey: string;
  /**
   * A snapshot it is known to hold at: the one it was built in, moved on when a later read found
   * it unchanged. While the server's is the same, or only `neutral` writes ended since, it holds.
   */
  snapshot: string;
  /** The clock (ms) when it was built, and when the first fact in it reaches its valid_to. */
  at: number;
  /** The clock (ms) when it was built or a probe last found it unchanged. */
  probedAt: number;
  until: number;
}

interface SubjectCache {
  state: ChainState | null;
  /** The anchor `state` and `view` were judged against, and its JSON (to see it change). */
  anchor: OwnerAnchor | null;
  anchorKey: string;
  keyId: string | null;
  publicKeyPem: string | null;
  /** pg_postmaster_start_time when `state` was built. */
  started: string | null;
  /** Links stored when `state` was built (a broken state stays valid while nothing changes). */
  stored: number;
  /** The row version of every link `state` verified (and of any stray link before it), by seq. */
  linkVersions: Map<number, string>;
  /** Links whose row version is older than this xid are as `state` verified them. */
  linkSince: string;
  /** Changes whenever `state` does (built again or extended). */
  epoch: number;
  /** The longest chain this process saw verified, to find a cut head. */
  highWater: { seq: number; hash: string } | null;
  facts: Map<string, CachedFact>;
  view: CachedView | null;
  /** Serialises refreshes of this subject. */
  lock: Promise<void>;
  /** A read of the view queued behind `lock` and not started yet: later reads share it. */
  queuedRead: Promise<TrustView> | null;
}

/**
 * After this many verified links written since the state's xid, the verifier compares every
 * verified link's row version once and counts from a newer xid; after this many facts and
 * ledger rows written since a kept view's xid (pending proposals, which do not change it), the
 * view is built again. Either way the per-read check stays small.
 */
export const LINK_REBASE_AFTER = 256;

/**
 * A kept view is returned past the engine's own turns and manifests for at most this long after a
 * probe last confirmed it; then the probe runs again. What a trigger or rule planted on those
 * tables wrote in the engine's own transactions (never shown: the view is the verified one) is
 * found within this, or at the first other transaction to end, whichever comes first.
 */
export const NEUTRAL_PROBE_AFTER_MS = 5_000;

/**
 * The xid a check counts from must be less than 2^30 transactions old: age() compares 32-bit
 * xids within 2^31 of now, so a check counts from a newer one long before that can wrap.
 */
const recentEnough = (age: number): boolean => Number.isFinite(age) && age >= 0 && age < 2 ** 30;

/** The owner's anchor for a subject, as the process reading holds it (null: none). */
export type AnchorSource = (subjectId: string) => OwnerAnchor | null;

/**
 * Verifies incrementally what reads may show. See docs/TRUST.md ("What a read costs").
 *
 * Per subject it keeps the verified chain state, with the row version (xmin) of every verified
 * link as it was read with the link's content, and the last trust view with a mark of the rows
 * it was built from (TrustSql.probe). A read costs one statement: the chain probe, a check of
 * the verified links (those written since the state was built must be the row versions that
 * were verified; older ones cannot have changed, and their count shows one removed), and the
 * mark. When all of it matches and no fact's world time has ended since, the view is the same
 * and is returned as it is. Otherwise the view is built again, in one repeatable-read snapshot:
 * new links are verified one by one, a changed or new live row is read and hashed again, the
 * departed facts are read again, and everything is judged again; a chain whose verified links
 * changed (an edited, deleted or reordered link) is verified again from the start.
 */
export function createTrustVerifier(deps: {
  client: SqlClient;
  crypto: ChainCrypto;
  clock: () => Date;
  /** The store's id, to pick the anchored head recorded for it. */
  storeId?: string;
  /** The owner's key and heads from outside the store; asked on every read. */
  anchor?: AnchorSource;
  /** LINK_REBASE_AFTER, for tests. */
  rebaseAfter?: number;
  /** The engine's own transactions that write nothing a view reads (turns, manifests). */
  neutral?: NeutralWrites;
}): TrustVerifier {
  const { crypto, neutral } = deps;
  const rebaseAfter = deps.rebaseAfter ?? LINK_REBASE_AFTER;
  const caches = new Map<string, SubjectCache>();

  const cacheOf = (subjectId: string): SubjectCache => {
    let c = caches.get(subjectId);
    if (c === undefined) {
      c = {
        state: null,
        anchor: null,
        anchorKey: '',
        keyId: null,
        publicKeyPem: null,
        started: null,
        stored: 0,
        linkVersions: new Map(),
        linkSince: '',
        epoch: 0,
        highWater: null,
        facts: new Map(),
        view: null,
        lock: Promise.resolve(),
        queuedRead: null,
      };
      caches.set(subjectId, c);
    }
    return c;
  };

  /**
   * Asks for the subject's anchor (every read: the owner may decide, and the head file grow, while
   * this process runs). An anchor that changed drops what was judged against the old one.
   */
  const syncAnchor = (c: SubjectCache, subjectId: string): void => {
    const anchor = deps.anchor?.(subjectId) ?? null;
    const key = anchor === null ? '' : JSON.stringify(anchor);
    if (key === c.anchorKey) return;
    // another key is another verdict on every link; other heads change only the view
    if (anchor?.keyId !== c.anchor?.keyId || anchor?.publicKeyPem !== c.anchor?.publicKeyPem) {
      c.state = null;
    }
    c.anchor = anchor;
    c.anchorKey = key;
    c.view = null;
  };

  /** Whether the verified links are exactly the row versions `state` verified. */
  const linksHold = (c: SubjectCache, p: ChainProbe): boolean => {
    const check = p.links;
    if (check === null || check.inPrefix !== c.linkVersions.size) return false;
    return check.recent.every((r) => c.linkVersions.get(r.seq) === r.version);
  };

  const holds = (c: SubjectCache, p: ChainProbe): boolean => {
    const s = c.state;
    if (s === null || p.keyId !== c.keyId || p.publicKeyPem !== c.publicKeyPem) return false;
    if (!p.plainTables) return false;
    if (p.started !== c.started || !linksHold(c, p)) return false;
    if (s.broken !== null) return p.count === c.stored;
    // links after the verified ones are checked one by one as they are read (a gap breaks it)
    return p.count >= s.length;
  };

  /** The engine's own pool runs statements side by side; a transaction has one connection. */
  const parallelOn = (db: SqlExecutor): boolean =>
    db === deps.client && deps.client.capabilities.concurrentConnections;

  const emptyState = (subjectId: string) =>
    new ChainState(subjectId, { crypto, publicKeyPem: '', keyId: '' });

  async function chainOf(
    c: SubjectCache,
    subjectId: string,
    db: SqlExecutor,
    markSince?: string | 'snapshot',
  ): Promise<{ state: ChainState; probe: ChainProbe | null }> {
    syncAnchor(c, subjectId);
    const sql = new TrustSql(db, parallelOn(db));
    const before = c.state;
    const probe = await sql.probe(subjectId, {
      ...(before === null ? {} : { links: { len: before.length, since: c.linkSince } }),
      ...(markSince === undefined ? {} : { markSince }),
    });
    if (probe === null) return { state: emptyState(subjectId), probe: null };
    // the engine's own noted transactions belong to the server run this probe saw
    neutral?.run(probe.started);
    if (!holds(c, probe)) {
      c.state = new ChainState(subjectId, {
        crypto,
        publicKeyPem: probe.publicKeyPem ?? '',
        keyId: probe.keyId ?? '',
      });
      const anchor = c.anchor;
      const mismatch =
        anchor === null
          ? null
          : anchorKeyMismatch(
              anchor,
              { keyId: probe.keyId, publicKeyPem: probe.publicKeyPem },
              crypto,
            );
      // a store whose key is not the owner's: nothing signed with it is trusted
      if (mismatch !== null)
        c.state.broken = { brokenAt: 1, code: 'KEY_MISMATCH', reason: mismatch };
      c.keyId = probe.keyId;
      c.publicKeyPem = probe.publicKeyPem;
      c.started = probe.started;
      c.linkVersions = new Map();
      // every link is read below, after this snapshot: older row versions were read as they are
      c.linkSince = probe.snapshotXmin;
      c.facts.clear();
      c.epoch++;
    }
    const state = c.state as ChainState;
    if (state.broken === null && probe.count > state.length) {
      const from = state.length;
      const links = await sql.linksAfter(subjectId, from);
      if (probe.keyId === null && links.length > 0) {
        state.broken = {
          brokenAt: 1,
          code: 'KEY_MISMATCH',
          reason: 'the subject has decisions but no owner key',
        };
      } else {
        const ids = links.filter((l) => decidesProposal(l.link)).map((l) => l.link.proposalId);
        const facts = new Map<string, Fact>(
          (await sql.facts(subjectId, ids)).map((f) => [f.id, f]),
        );
        state.extend(
          links.map((l) => l.link),
          (id) => facts.get(id) ?? null,
          crypto,
        );
      }
      for (const { link, version } of links) {
        if (Number.isSafeInteger(link.seq) && link.seq <= state.length) {
          c.linkVersions.set(link.seq, version);
        }
      }
      // links the ordered read could not place (a seq of NULL) break the chain where it ends
      if (state.broken === null && probe.count > state.length) {
        state.broken = {
          brokenAt: state.length + 1,
          code: 'SEQ_GAP',
          reason: `the store holds ${probe.count} links, and only ${state.length} follow one another from link 1`,
        };
      }
      c.epoch++;
    } else if (
      (probe.links?.recent.length ?? 0) > rebaseAfter ||
      !recentEnough(probe.links?.sinceAge ?? 0)
    ) {
      // compare every verified link once, then count from this newer snapshot
      const now = await sql.linkVersions(subjectId, state.length);
      const same =
        now.versions.size === c.linkVersions.size &&
        [...now.versions].every(([seq, v]) => c.linkVersions.get(seq) === v);
      if (!same) {
        c.state = null;
        return chainOf(c, subjectId, db, markSince);
      }
      if (now.snapshotXmin !== '') c.linkSince = now.snapshotXmin;
    }
    c.stored = probe.count;
    const hw = c.highWater;
    if (state.broken === null && (hw === null || state.length > hw.seq)) {
      c.highWater = { seq: state.length, hash: state.tip.hash };
    }
    return { state, probe };
  }

  function headCutOf(c: SubjectCache, state: ChainState, probe: ChainProbe | null): HeadCut | null {
    const hw = c.highWater;
    const found = probe?.count ?? state.length;
    const anchor = c.anchor;
    const head =
      state.broken === null ? anchoredHead(anchor, deps.storeId ?? '', state.rootHash) : null;
    if (anchor !== null && head !== null) {
      const cut = anchoredHeadCut(state, head, found, anchor.source);
      if (cut !== null) return cut;
    }
    if (
      hw !== null &&
      (state.length < hw.seq || (state.length === hw.seq && state.tip.hash !== hw.hash))
    ) {
      return {
        source: 'process',
        expected: hw,
        found,
        reason: `this process verified ${hw.seq} links, and the store now holds ${found}`,
      };
    }
    const seen = probe?.seen ?? null;
    if (seen !== null && seen.hashNow !== seen.hash) {
      return {
        source: 'arrival',
        expected: { seq: seen.length, hash: seen.hash },
        found,
        reason:
          seen.hashNow === null
            ? `an arrival saw link ${seen.length}, and the store's chain now ends at ${found}`
            : `an arrival saw another link at ${seen.length} than the store holds now`,
      };
    }
    return null;
  }

  /** The probe's answers a view shows: a view holds only while they are the same. */
  const probeKey = (p: ChainProbe | null): string =>
    p === null ? '' : JSON.stringify([p.count, p.maxSeq, p.seen, p.keyId, p.started, p.slots]);

  async function viewOf(
    c: SubjectCache,
    subjectId: string,
    db: SqlExecutor,
    taken?: Promise<ServerSnapshot>,
  ): Promise<TrustView> {
    syncAnchor(c, subjectId);
    const cached = c.view;
    if (cached !== null) {
      const timely = (now: number) => now >= cached.at && now < cached.until;
      // no transaction that wrote anything has ended since the view was built: the same view
      // (not inside a caller's transaction, whose own writes no snapshot shows). The snapshot
      // the caller's request took, when it has one; else (or when that read failed) one read here
      const given = taken === undefined ? null : await taken.catch(() => null);
      const same = db !== deps.client ? null : (given ?? (await new TrustSql(db).snapshot()));
      const now = deps.clock().getTime();
      // the view holds at a snapshot that saw every transaction `same` saw ended (the same one,
      // or a later one a read since moved it to: a request's snapshot can be older than that)
      const covered = same !== null && sawEverything(cached.snapshot, same.snapshot);
      if (
        same !== null &&
        !same.recovery &&
        same.started === c.started &&
        cached.epoch === c.epoch &&
        timely(now) &&
        (covered ||
          // or every transaction that ended since was one of the engine's turns or manifests,
          // and the probe ran lately (a trigger planted in such a transaction waits for it)
          (now - cached.probedAt < NEUTRAL_PROBE_AFTER_MS &&
            neutral?.onlyThese(cached.snapshot, same.snapshot, same.started) === true))
      ) {
        if (!covered) cached.snapshot = same.snapshot;
        return cached.view;
      }
      const { probe } = await chainOf(c, subjectId, db, cached.since);
      const probedAt = deps.clock().getTime();
      if (
        probe !== null &&
        cached.epoch === c.epoch &&
        probe.mark === cached.mark &&
        probeKey(probe) === cached.probeKey &&
        // rows written since the view (pending proposals) are read on every check: past a
        // bound, the view is built again, and counts from a newer snapshot
        probe.markRecent <= rebaseAfter &&
        recentEnough(probe.markSinceAge ?? -1) &&
        probe.plainTables &&
        probedAt >= cached.at &&
        probedAt < cached.until
      ) {
        // every statement of the probe ran after `same` was taken, and found the rows as they
        // were: the view holds at `same` (a write the probe raced is not in it, and is seen next)
        if (same !== null && same.started === c.started && !same.recovery && !covered) {
          cached.snapshot = same.snapshot;
        }
        cached.probedAt = probedAt;
        return cached.view;
      }
    }
    if (db !== deps.client) return build(c, subjectId, db, false);
    // one snapshot for every read of the view, so its mark says exactly what it was built from
    return deps.client.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      return build(c, subjectId, tx, true);
    });
  }

  /**
   * Builds the view from what `db` holds. `snapshot`: every statement on `db` sees one snapshot
   * (the view is then kept, under the mark of that snapshot).
   */
  async function build(
    c: SubjectCache,
    subjectId: string,
    db: SqlExecutor,
    snapshot: boolean,
  ): Promise<TrustView> {
    let { state, probe } = await chainOf(c, subjectId, db, snapshot ? 'snapshot' : undefined);
    const mark = probe?.mark ?? null;
    const firstProbe = probe;
    const sql = new TrustSql(db);
    const versions = await sql.activeVersions(subjectId);
    const stale = versions.filter((v) => c.facts.get(v.id)?.version !== v.version).map((v) => v.id);
    for (const e of await sql.activeEvidence(subjectId, stale)) {
      c.facts.set(e.fact.id, {
        version: e.version,
        evidence: e,
        contentHash: factContentHash(e.fact, crypto),
      });
    }
    const activeIds = new Set(versions.map((v) => v.id));
    for (const id of c.facts.keys()) if (!activeIds.has(id)) c.facts.delete(id);
    // the ledger and the originals of restorations are read again whole: a row of theirs can
    // change while the live fact's own row does not
    const ledger = await sql.ledgerFacts(subjectId);
    const originalIds = new Set<string>();
    for (const v of versions) {
      const from = c.facts.get(v.id)?.evidence.fact.restoredFromId;
      if (from !== null && from !== undefined) originalIds.add(from);
    }
    const originals = new Map((await sql.facts(subjectId, [...originalIds])).map((f) => [f.id, f]));
    const active: ActiveFactEvidence[] = [];
    for (const v of versions) {
      const cached = c.facts.get(v.id);
      if (cached === undefined) continue;
      const f = cached.evidence.fact;
      const from = f.restoredFromId;
      active.push({
        ...cached.evidence,
        retractions: ledger.retracted.get(f.id) ?? [],
        restoration:
          from === null
            ? null
            : {
                original: originals.get(from) ?? null,
                settled: ledger.settled.has(`${f.id}\u0000${from}`),
              },
        contentHash: cached.contentHash,
      });
    }
    const now = deps.clock();
    const unsigned = await sql.unsignedDeparted(subjectId);
    let departed: DepartedFactEvidence[] = [];
    let headCut: HeadCut | null = null;
    const judge = async (s: ChainState) => {
      headCut = headCutOf(c, s, probe);
      // a chain that stops short of the owner's (broken, or its head cut) proves nothing past it
      const end =
        s.broken !== null
          ? { code: s.broken.code, verified: s.length }
          : headCut !== null
            ? { code: 'HEAD_CUT' as const, verified: s.length }
            : null;
      departed = [
        ...(await sql.departed(
          subjectId,
          s.chainLive().filter((id) => !activeIds.has(id)),
        )),
        ...unsigned.filter((u) => wasBacked(s, u, subjectId, crypto)),
      ];
      return judgeFacts(s, active, departed, now, crypto, end);
    };
    let judged = await judge(state);
    // Outside one snapshot the chain was read before the live rows: a decision another process
    // committed in between (its link and its fact's status in one transaction) would look
    // unbacked. Read the chain again before withholding anything.
    if (!snapshot && (judged.withheld.length > 0 || judged.unexplained.length > 0)) {
      ({ state, probe } = await chainOf(c, subjectId, db));
      judged = await judge(state);
    }
    const byAge = (a: Fact, b: Fact) =>
      a.recordedAt.getTime() - b.recordedAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    judged.live.sort(byAge);
    judged.expired.sort(byAge);
    judged.withheld.sort((a, b) => byAge(a.fact, b.fact));
    const view: TrustView = frozenView({
      subjectId,
      chain: {
        verified: state.length,
        stored: probe?.count ?? state.length,
        headHash: state.tip.hash,
        broken: state.broken,
        headCut,
        anchor: c.anchor?.source ?? null,
        unanchored: c.anchor === null && probe !== null && probe.keyId !== null,
      },
      live: judged.live,
      expired: judged.expired,
      withheld: judged.withheld,
      unexplained: judged.unexplained,
      delegations: delegationProblems(state, probe?.slots ?? []),
      disputed: judged.disputed,
      unsignedRetractions: judged.unsignedRetractions,
    });
    if (
      snapshot &&
      mark !== null &&
      firstProbe !== null &&
      firstProbe.markSince !== null &&
      firstProbe.plainTables
    ) {
      // the view changes when the first fact in it reaches its valid_to
      let until = Infinity;
      for (const at of [...judged.live.map((f) => f.validTo), ...departed.map((d) => d.validTo)]) {
        if (at !== null && at.getTime() > now.getTime()) until = Math.min(until, at.getTime());
      }
      c.view = {
        view,
        epoch: c.epoch,
        since: firstProbe.markSince,
        mark,
        probeKey: probeKey(firstProbe),
        snapshot: firstProbe.snapshot,
        at: now.getTime(),
        probedAt: now.getTime(),
        until,
      };
    }
    return view;
  }

  /** Runs `fn` after every earlier holder of the subject's state, and before any later one. */
  function held<T>(subjectId: string, fn: () => Promise<T>): Promise<T> {
    const c = cacheOf(subjectId);
    const run = c.lock.then(fn);
    c.lock = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  function withSubject<T>(
    subjectId: string,
    fn: (held: Omit<HeldTrust, 'check'>) => Promise<T>,
  ): Promise<T> {
    const c = cacheOf(subjectId);
    return held(subjectId, () =>
      fn({
        chain: async (db) => (await chainOf(c, subjectId, db)).state,
        view: (db) => viewOf(c, subjectId, db),
      }),
    );
  }

  /**
   * Reads that arrive while another is queued share it: it has not started, so it starts after
   * each of them arrived and sees every write committed before any of them. Under load one
   * subject's reads then wait for at most the check running now and one more, not for one
   * check per read ahead of them. A read that brings its request's snapshot (`taken`) joins a
   * queued read the same way, but is never joined: it checks against a snapshot already taken.
   */
  function view(subjectId: string, taken?: Promise<ServerSnapshot>): Promise<TrustView> {
    const c = cacheOf(subjectId);
    if (c.queuedRead !== null) return c.queuedRead;
    // a read with the caller's snapshot is its own: a later caller's writes may postdate it
    if (taken !== undefined) return held(subjectId, () => viewOf(c, subjectId, deps.client, taken));
    const read: Promise<TrustView> = held(subjectId, () => {
      if (c.queuedRead === read) c.queuedRead = null;
      return viewOf(c, subjectId, deps.client);
    });
    c.queuedRead = read;
    // a read that fails before it starts (it cannot: the lock never rejects) must not stay queued
    read
      .catch(() => undefined)
      .finally(() => {
        if (c.queuedRead === read) c.queuedRead = null;
      });
    return read;
  }

  return { view, withSubject, anchor: (subjectId) => deps.anchor?.(subjectId) ?? null };
}
