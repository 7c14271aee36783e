import type { ChainCrypto } from '../domain/decision-chain.js';
import type { Fact } from '../domain/fact.js';
import {
  ChainState,
  factContentHash,
  judgeFacts,
  wasBacked,
  type ActiveFactEvidence,
  type HeadCut,
  type TrustReader,
  type TrustView,
} from '../domain/trust.js';
import type { SqlClient, SqlExecutor } from '../store/sql-client.js';
import { TrustSql, type ChainProbe } from '../store/trust-sql.js';

/**
 * Verifies incrementally what reads may show. Per subject it keeps the verified chain state
 * (each link's hash and signature is checked once per process) and, per stored-as-live fact, the
 * evidence read at its row version (xmin: any update of a row gives it a new one). Each read
 * costs one probe of the chain, one list of the live rows' versions, and work for what changed:
 * new links are verified one by one; a changed or new live row is read and hashed again; a chain
 * whose verified prefix changed (an edited, deleted or reordered link) is verified again from
 * the start. See docs/TRUST.md.
 */
export interface TrustVerifier extends TrustReader {
  /**
   * Runs `fn` with the subject's trust state held: no other read of this subject refreshes it
   * meanwhile, so a caller in a transaction can read (through `tx`) and then act on it.
   */
  withSubject<T>(subjectId: string, fn: (held: HeldTrust) => Promise<T>): Promise<T>;
}

/** The trust state of one subject, held by `withSubject`. */
export interface HeldTrust {
  /** The verified chain as `db` sees it now. */
  chain(db: SqlExecutor): Promise<ChainState>;
  /** The trust view as `db` sees it now. */
  view(db: SqlExecutor): Promise<TrustView>;
}

interface CachedFact {
  version: string;
  evidence: ActiveFactEvidence;
  contentHash: string;
}

interface SubjectCache {
  state: ChainState | null;
  keyId: string | null;
  publicKeyPem: string | null;
  /** Links stored when `state` was built (a broken state stays valid while nothing changes). */
  stored: number;
  /** The longest chain this process saw verified, to find a cut head. */
  highWater: { seq: number; hash: string } | null;
  facts: Map<string, CachedFact>;
  /** The verified links' digest (TrustSql.linkDigest), and when it was last compared. */
  digest: string | null;
  digestLength: number;
  digestAt: number;
  /** Serialises refreshes of this subject. */
  lock: Promise<void>;
}

/**
 * How often a read compares the verified links' digest with the store (ms of real time): an
 * in-place edit of a link this process verified earlier (its hash column kept) is found within
 * this long by reads, and at once by every write, which runs the full check.
 */
export const LINK_RECHECK_MS = 5_000;

export function createTrustVerifier(deps: {
  client: SqlClient;
  crypto: ChainCrypto;
  clock: () => Date;
  recheckMs?: number;
}): TrustVerifier {
  const { crypto } = deps;
  const recheckMs = deps.recheckMs ?? LINK_RECHECK_MS;
  const caches = new Map<string, SubjectCache>();

  const cacheOf = (subjectId: string): SubjectCache => {
    let c = caches.get(subjectId);
    if (c === undefined) {
      c = {
        state: null,
        keyId: null,
        publicKeyPem: null,
        stored: 0,
        highWater: null,
        facts: new Map(),
        digest: null,
        digestLength: -1,
        digestAt: 0,
        lock: Promise.resolve(),
      };
      caches.set(subjectId, c);
    }
    return c;
  };

  const holds = (c: SubjectCache, p: ChainProbe): boolean => {
    const s = c.state;
    if (s === null || p.keyId !== c.keyId || p.publicKeyPem !== c.publicKeyPem) return false;
    if (p.count !== p.maxSeq) return false;
    if (s.broken !== null)
      return p.count === c.stored && (s.length === 0 || p.hashAtTip === s.tip.hash);
    return p.count >= s.length && (s.length === 0 || p.hashAtTip === s.tip.hash);
  };

  async function chainOf(c: SubjectCache, subjectId: string, db: SqlExecutor): Promise<ChainState> {
    const sql = new TrustSql(db);
    const probe = await sql.probe(subjectId, c.state?.length ?? 0);
    if (probe === null) return new ChainState(subjectId, { crypto, publicKeyPem: '', keyId: '' });
    let edited = false;
    if (c.state !== null && c.digest !== null && performance.now() - c.digestAt >= recheckMs) {
      edited = (await sql.linkDigest(subjectId, c.state.length)) !== c.digest;
      c.digestAt = performance.now();
    }
    if (edited || !holds(c, probe)) {
      c.state = new ChainState(subjectId, {
        crypto,
        publicKeyPem: probe.publicKeyPem ?? '',
        keyId: probe.keyId ?? '',
      });
      c.keyId = probe.keyId;
      c.publicKeyPem = probe.publicKeyPem;
      c.facts.clear();
      c.digest = null;
    }
    const state = c.state as ChainState;
    if (state.broken === null && probe.count > state.length) {
      const links = await sql.linksAfter(subjectId, state.length);
      if (probe.keyId === null && links.length > 0) {
        state.broken = {
          brokenAt: 1,
          code: 'KEY_MISMATCH',
          reason: 'the subject has decisions but no owner key',
        };
      } else {
        const ids = links.filter((l) => l.decision !== 'delegate').map((l) => l.proposalId);
        const facts = new Map((await sql.facts(subjectId, ids)).map((f) => [f.id, f]));
        state.extend(links, (id) => facts.get(id) ?? null, crypto);
      }
    }
    c.stored = probe.count;
    lastProbe.set(subjectId, probe);
    if (c.digest === null || c.digestLength !== state.length) {
      c.digest = await sql.linkDigest(subjectId, state.length);
      c.digestLength = state.length;
      c.digestAt = performance.now();
    }
    const hw = c.highWater;
    if (state.broken === null && (hw === null || state.length > hw.seq)) {
      c.highWater = { seq: state.length, hash: state.tip.hash };
    }
    return state;
  }
  const lastProbe = new Map<string, ChainProbe>();

  function headCutOf(
    c: SubjectCache,
    state: ChainState,
    probe: ChainProbe | undefined,
  ): HeadCut | null {
    const hw = c.highWater;
    let cut: HeadCut | null = null;
    if (
      hw !== null &&
      (state.length < hw.seq || (state.length === hw.seq && state.tip.hash !== hw.hash))
    ) {
      cut = {
        source: 'process',
        expected: hw,
        found: probe?.count ?? state.length,
        reason: `this process verified ${hw.seq} links, and the store now holds ${probe?.count ?? state.length}`,
      };
    }
    const seen = probe?.seen ?? null;
    if (cut === null && seen !== null && seen.hashNow !== seen.hash) {
      cut = {
        source: 'arrival',
        expected: { seq: seen.length, hash: seen.hash },
        found: probe?.count ?? state.length,
        reason:
          seen.hashNow === null
            ? `an arrival saw link ${seen.length}, and the store's chain now ends at ${probe?.count ?? state.length}`
            : `an arrival saw another link at ${seen.length} than the store holds now`,
      };
    }
    return cut;
  }

  async function viewOf(c: SubjectCache, subjectId: string, db: SqlExecutor): Promise<TrustView> {
    let state = await chainOf(c, subjectId, db);
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
    const active: ActiveFactEvidence[] = [];
    for (const v of versions) {
      const cached = c.facts.get(v.id);
      if (cached !== undefined)
        active.push({ ...cached.evidence, contentHash: cached.contentHash });
    }
    const now = deps.clock();
    const unsigned = await sql.unsignedDeparted(subjectId);
    const judge = async (s: ChainState) =>
      judgeFacts(
        s,
        active,
        [
          ...(await sql.departed(
            subjectId,
            s.chainLive().filter((id) => !activeIds.has(id)),
          )),
          ...unsigned.filter((u) => wasBacked(s, u, subjectId, crypto)),
        ],
        now,
        crypto,
      );
    let judged = await judge(state);
    // The chain was read before the live rows: a decision another process committed in between
    // (its link and its fact's status in one transaction) would look unbacked. Read the chain
    // again before withholding anything.
    if (judged.withheld.length > 0 || judged.unexplained.length > 0) {
      state = await chainOf(c, subjectId, db);
      judged = await judge(state);
    }
    const byAge = (a: Fact, b: Fact) =>
      a.recordedAt.getTime() - b.recordedAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    judged.live.sort(byAge);
    judged.expired.sort(byAge);
    judged.withheld.sort((a, b) => byAge(a.fact, b.fact));
    const probe = lastProbe.get(subjectId);
    return {
      subjectId,
      chain: {
        verified: state.length,
        stored: probe?.count ?? state.length,
        headHash: state.tip.hash,
        broken: state.broken,
        headCut: headCutOf(c, state, probe),
      },
      ...judged,
    };
  }

  function withSubject<T>(subjectId: string, fn: (held: HeldTrust) => Promise<T>): Promise<T> {
    const c = cacheOf(subjectId);
    const run = c.lock.then(() =>
      fn({
        chain: (db) => chainOf(c, subjectId, db),
        view: (db) => viewOf(c, subjectId, db),
      }),
    );
    c.lock = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  return {
    view: (subjectId) => withSubject(subjectId, (held) => held.view(deps.client)),
    withSubject,
  };
}
