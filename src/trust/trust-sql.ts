import type { DecisionLink, RetractionContent } from '../domain/decision-chain.js';
import type { Fact, FactStatus } from '../domain/fact.js';
import type { ActiveFactEvidence, DepartedFactEvidence, ServerSnapshot } from '../domain/trust.js';
import { decisionColumns, toLink, type DecisionDbRow } from '../store/decision-sql.js';
import { FACT_COLUMNS, toFact, type FactDbRow } from '../store/fact-sql.js';
import { storedProbe } from '../store/retraction-sql.js';
import { SERVER_RUN, SERVER_SNAPSHOT_COLUMNS, serverSnapshotOf } from '../store/server-snapshot.js';
import type { SqlExecutor } from '../store/sql-client.js';
import { guard } from '../store/store-error.js';

/** One cheap look at a subject's chain: enough to tell whether a cached verification still holds. */
export interface ChainProbe {
  publicKeyPem: string | null;
  keyId: string | null;
  /** Links stored, and the highest seq (equal when the seqs are 1..n with no gap). */
  count: number;
  maxSeq: number;
  /** The longest chain an arrival recorded seeing, and the hash it saw at that length. */
  seen: { length: number; hash: string; hashNow: string | null } | null;
  /**
   * The oldest transaction still running when this statement's snapshot was taken (a 32-bit
   * xid, as text): every row version written after the snapshot, or by a transaction the
   * snapshot could not see, has this xid or a newer one.
   */
  snapshotXmin: string;
  /**
   * This statement's snapshot (pg_current_snapshot: xmin, xmax and the transactions in
   * progress). Two equal snapshots mean no transaction that wrote anything has ended between
   * them, anywhere on the server: the store is the same.
   */
  snapshot: string;
  /**
   * Which run of the server this is (its start, and its statistics' last reset, which a crash
   * restart renews): a restart may have reset transaction ids, so nothing cached holds.
   */
  started: string;
  /**
   * Whether facts, decisions and retractions are plain tables. Row versions are trusted only
   * then: a view put in a table's place could make up an `xmin` column.
   */
  plainTables: boolean;
  /**
   * The subject's action slots and any slot auto-live or naming tools, as stored (sorted by
   * name): what reads compare with the signed delegations.
   */
  slots: StoredSlotDelegation[];
  /** The links check asked for (`links`), or null. */
  links: LinkCheck | null;
  /** The store mark asked for (`markSince`), or null; and the xid it counts from. */
  mark: string | null;
  markSince: string | null;
  /** How many rows the mark found written since `markSince` (a view is built again past a bound). */
  markRecent: number;
  /** How many transactions ago `markSince` was. */
  markSinceAge: number | null;
}

/** A slot's auto-live setting as its row says. */
export interface StoredSlotDelegation {
  name: string;
  autoLive: boolean;
  tools: string[];
}

/** The probe's `slots` column: [[name, auto_live, tools], …] as JSON text. */
function parseSlots(text: string | null): StoredSlotDelegation[] {
  if (text === null) return [];
  const rows = JSON.parse(text) as Array<[string, boolean, string[] | null]>;
  return rows.map(([name, autoLive, tools]) => ({
    name,
    autoLive: autoLive === true,
    tools: Array.isArray(tools) ? tools : [],
  }));
}

/** The links up to `len`: how many, and the row versions of those written since `since`. */
export interface LinkCheck {
  /** How many transactions ago `since` was (age(since)). */
  sinceAge: number;
  inPrefix: number;
  recent: Array<{ seq: number; version: string }>;
}

/** A stored link with its row version (xmin), read in the same statement. */
export interface VersionedLink {
  link: DecisionLink;
  version: string;
}

/** A stored-as-live fact's row version (xmin changes with every update of the row). */
export interface FactVersion {
  id: string;
  version: string;
}

/** The current snapshot's xmin as a 32-bit xid. */
const SNAPSHOT_XMIN = `(pg_catalog.pg_snapshot_xmin(pg_catalog.pg_current_snapshot())::text::bigint % 4294967296)::text`;

const PREPARED = { prepare: true } as const;

/**
 * What a mark reads of one table's rows for a subject, in one scan: how many, and the ids and
 * row versions of those written since xid `since` (age(xmin) <= age(since): newer,
 * wraparound-safe; `since` null: this snapshot's xmin). Two marks taken with the same `since`
 * are equal when as many rows are older than `since` and the recent rows that matter are the
 * same row versions: a row version older than `since` was committed before the snapshot that
 * chose `since`, so it was there then; none can be written later, and the count shows one
 * removed or rewritten. (Only a row's header and first columns are read: the threshold is a
 * subquery, worked out once.)
 */
function rowMarkSql(table: string, subject: string, sinceParam: string): string {
  const since = `coalesce(${sinceParam}::text, ${SNAPSHOT_XMIN})`;
  return `SELECT count(*)::int AS n, (SELECT ${since}) AS since,
            (SELECT age((${since})::xid)) AS since_age,
            json_agg(json_build_array(id, xmin::text))
              FILTER (WHERE age(xmin) <= (SELECT age((${since})::xid))) AS recent
          FROM ${table} WHERE subject_id = ${subject}`;
}

interface RowMarkRow {
  n: number;
  since: string;
  since_age: number;
  recent: Array<[string, string]> | null;
}

/**
 * A mark as one comparable string: the rows older than `since`, and the recent ones that
 * matter (`matters`: by `id@version`; every one when not given).
 */
function markOf(r: RowMarkRow, matters?: ReadonlySet<string>): string {
  const recent = (r.recent ?? []).map(([id, v]) => `${id}@${v}`);
  const matter = matters === undefined ? recent : recent.filter((x) => matters.has(x));
  return `${r.n - recent.length}:${JSON.stringify(matter.sort())}`;
}

function baseSql(subject: string): string {
  return `SELECT s.owner_public_key AS pk, s.owner_key_id AS kid,
      mf.chain_length AS seen_length, mf.chain_head AS seen_head,
      (SELECT hash FROM decisions WHERE subject_id = ${subject} AND seq = mf.chain_length)
        AS seen_hash_now,
      ${SNAPSHOT_XMIN} AS snapshot_xmin,
      pg_catalog.pg_current_snapshot()::text AS snapshot,
      ${SERVER_RUN} AS started,
      (SELECT bool_and(c.relkind = 'r') FROM pg_class c
       WHERE c.oid IN ('facts'::regclass, 'decisions'::regclass, 'retractions'::regclass))
        AS plain,
      (SELECT coalesce(json_agg(json_build_array(name, auto_live, auto_live_tools) ORDER BY name),
                       '[]')::text
       FROM slots WHERE subject_id = ${subject}
         AND (auto_live OR cardinality(auto_live_tools) > 0 OR rule = 'action')) AS slots
    FROM subjects s
    LEFT JOIN LATERAL (
      SELECT chain_length, chain_head FROM arrival_manifests
      WHERE subject_id = ${subject} AND chain_length IS NOT NULL AND chain_length > 0
      ORDER BY chain_length DESC LIMIT 1
    ) mf ON true
    WHERE s.id = ${subject}`;
}

/** Every link counted (and the highest seq) in the scan that checks the verified ones. */
function linksSql(subject: string, len: string, since: string): string {
  return `SELECT count(*)::int AS total, max(seq) AS m,
      (SELECT age(${since}::text::xid)) AS since_age,
      count(*) FILTER (WHERE seq <= ${len}::int)::int AS n,
      json_agg(json_build_array(seq, xmin::text))
        FILTER (WHERE seq <= ${len}::int AND age(xmin) <= (SELECT age(${since}::text::xid)))
        AS recent
    FROM decisions WHERE subject_id = ${subject}`;
}

interface BaseRow {
  pk: string | null;
  kid: string | null;
  seen_length: number | null;
  seen_head: string | null;
  seen_hash_now: string | null;
  snapshot_xmin: string;
  snapshot: string;
  started: string;
  plain: boolean;
  slots: string | null;
}

interface LinksRow {
  total: number;
  m: number | null;
  since_age: number | null;
  n: number;
  recent: Array<[number, string]> | null;
}

interface ProbeRows {
  base: BaseRow;
  links: LinksRow;
  facts: RowMarkRow | null;
  ledger: RowMarkRow | null;
}

/** The probe as separate statements, for a pool to run side by side. */
const BASE_SQL = baseSql('$1');
const LINKS_SQL = linksSql('$1', '$2', '$3');
/** The facts a trust view reads are every fact out of the pile, and any once promoted. */
const FACTS_MARK_SQL = rowMarkSql('facts', '$1', '$2');
const LEDGER_MARK_SQL = rowMarkSql('retractions', '$1', '$2');

/** The probe as one statement, for one connection (each statement there has its own cost). */
const PROBE_SQL = `SELECT b.*,
    (SELECT row_to_json(x) FROM (${linksSql('$1', '$2', '$3')}) x) AS links,
    CASE WHEN $5::boolean THEN
      (SELECT row_to_json(x) FROM (${rowMarkSql('facts', '$1', '$4')}) x) END AS facts,
    CASE WHEN $5::boolean THEN
      (SELECT row_to_json(x) FROM (${rowMarkSql('retractions', '$1', '$4')}) x) END AS ledger
  FROM (${baseSql('$1')}) b`;

/** Which recent facts matter, read as the row versions the mark saw (a pending one does not). */
const FACTS_MATTER_SQL = `SELECT id, xmin::text AS v, (status <> 'proposed' OR promoted_by IS NOT NULL) AS m
  FROM facts WHERE subject_id = $1 AND id = ANY($2::text[])`;

/** The xid a mark counts from, as the statements take it: null for this snapshot's xmin. */
const markSinceParam = (ask: ProbeAsk): string | null =>
  ask.markSince === undefined || ask.markSince === 'snapshot' ? null : ask.markSince;

/** What a probe is asked for besides the chain's head (see TrustSql.probe). */
export interface ProbeAsk {
  links?: { len: number; since: string };
  markSince?: string | 'snapshot';
}

/** A ledger row's words, as an owner's retraction signs them (`ledgerWordsSql`). */
interface LedgerWords {
  id: string;
  claim: string;
  corrected_claim: string;
  why_wrong: string;
  stood_on: string;
  procedure: string;
  pass_observation: string;
  overturn_condition: string;
  probe_spec: unknown;
  probe_stands_verdict: string | null;
  probe_overturns_verdict: string | null;
}

/** A JSON object of the words of the ledger row `r` (an alias) that `ledgerContent` reads. */
const ledgerWordsSql = (r: string): string =>
  `json_build_object('id', ${r}.id, 'claim', ${r}.claim, 'corrected_claim', ${r}.corrected_claim,
     'why_wrong', ${r}.why_wrong, 'stood_on', ${r}.stood_on, 'procedure', ${r}.procedure,
     'pass_observation', ${r}.pass_observation, 'overturn_condition', ${r}.overturn_condition,
     'probe_spec', ${r}.probe_spec, 'probe_stands_verdict', ${r}.probe_stands_verdict,
     'probe_overturns_verdict', ${r}.probe_overturns_verdict)`;

/** What an owner's retraction of `factId` signs, from the row's words (as RetractionSql reads it). */
function ledgerContent(subjectId: string, factId: string, r: LedgerWords): RetractionContent {
  return {
    id: r.id,
    subjectId,
    factId,
    claim: r.claim,
    correctedClaim: r.corrected_claim,
    whyWrong: r.why_wrong,
    stoodOn: r.stood_on,
    procedure: r.procedure,
    passObservation: r.pass_observation,
    overturnCondition: r.overturn_condition,
    probe: storedProbe(r),
  };
}

/** The reads that decide what is live: the chain, the stored-as-live facts and what backs them. */
export class TrustSql {
  /**
   * `parallel`: `db` runs several statements at once (a pool), so the probe's statements are
   * sent together; on one connection (a transaction, PGlite) they go one after another.
   */
  constructor(
    private readonly db: SqlExecutor,
    private readonly parallel = false,
  ) {}

  /**
   * The chain probe, with what else is asked for: `links` checks the links up to `len` written
   * since `since` (LinkCheck); `markSince` marks the rows a trust view reads besides the chain
   * (the facts out of the pile, and the ledger), counting from `markSince` (`'snapshot'`: from
   * this snapshot's xmin, for a caller whose statements all see one snapshot). Up to four
   * statements, sent at once (a pool runs them side by side). Each proves its rows unchanged at
   * the moment it ran, and a change once seen stays seen (row versions never go back), so all
   * of them matching means the store was as marked when the first of them ran.
   */
  probe(subjectId: string, ask: ProbeAsk = {}): Promise<ChainProbe | null> {
    return guard('reading the decision chain', async () => {
      const rows = this.parallel
        ? await this.probeSideBySide(subjectId, ask)
        : await this.probeAtOnce(subjectId, ask);
      if (rows === null) return null;
      const { base: r, links: lk } = rows;
      const f = rows.facts ?? undefined;
      const l = rows.ledger ?? undefined;
      // the recent facts that matter, as the versions the mark saw: one whose version moved on
      // since counts as mattering (the mark then differs, and the view is built again)
      let matters: Set<string> | undefined;
      if (f !== undefined && (f.recent ?? []).length > 0) {
        const recent = f.recent ?? [];
        const { rows } = await this.db.query<{ id: string; v: string; m: boolean }>(
          FACTS_MATTER_SQL,
          [subjectId, recent.map(([id]) => id)],
          PREPARED,
        );
        // by id and version: two rows with one id (a dropped key) each say for themselves
        const pending = new Set<string>();
        const promoted = new Set<string>();
        for (const x of rows) (x.m ? promoted : pending).add(`${x.id}@${x.v}`);
        matters = new Set(
          recent
            .map(([id, v]) => `${id}@${v}`)
            .filter((key) => promoted.has(key) || !pending.has(key)),
        );
      }
      return {
        publicKeyPem: r.pk,
        keyId: r.kid,
        count: lk.total,
        maxSeq: lk.m ?? 0,
        seen:
          r.seen_length === null || r.seen_head === null
            ? null
            : { length: r.seen_length, hash: r.seen_head, hashNow: r.seen_hash_now },
        snapshotXmin: r.snapshot_xmin,
        snapshot: r.snapshot,
        started: r.started,
        plainTables: r.plain === true,
        slots: parseSlots(r.slots),
        links:
          ask.links === undefined
            ? null
            : {
                sinceAge: Number(lk.since_age),
                inPrefix: lk.n,
                recent: (lk.recent ?? []).map(([seq, version]) => ({ seq, version })),
              },
        // both marks count from one xid (with 'snapshot', one only if they saw one snapshot)
        mark:
          f === undefined || l === undefined || f.since !== l.since
            ? null
            : `${markOf(f, matters)}/${markOf(l)}/${f.since}`,
        markSince: f?.since ?? null,
        markRecent: (f?.recent ?? []).length + (l?.recent ?? []).length,
        markSinceAge: f === undefined ? null : Number(f.since_age),
      };
    });
  }

  /** The probe's parts as four statements, sent together (a pool runs them side by side). */
  private async probeSideBySide(subjectId: string, ask: ProbeAsk): Promise<ProbeRows | null> {
    const marked = ask.markSince !== undefined;
    const since = markSinceParam(ask);
    const [base, lk, facts, ledger] = await Promise.all([
      this.db.query<BaseRow>(BASE_SQL, [subjectId], PREPARED),
      this.db.query<LinksRow>(
        LINKS_SQL,
        [subjectId, ask.links?.len ?? null, ask.links?.since ?? null],
        PREPARED,
      ),
      marked ? this.db.query<RowMarkRow>(FACTS_MARK_SQL, [subjectId, since], PREPARED) : null,
      marked ? this.db.query<RowMarkRow>(LEDGER_MARK_SQL, [subjectId, since], PREPARED) : null,
    ]);
    const b = base.rows[0];
    const l = lk.rows[0];
    if (b === undefined || l === undefined) return null;
    return { base: b, links: l, facts: facts?.rows[0] ?? null, ledger: ledger?.rows[0] ?? null };
  }

  /** The probe's parts as one statement (on one connection, each statement has its own cost). */
  private async probeAtOnce(subjectId: string, ask: ProbeAsk): Promise<ProbeRows | null> {
    const { rows } = await this.db.query<
      BaseRow & { links: LinksRow; facts: RowMarkRow | null; ledger: RowMarkRow | null }
    >(
      PROBE_SQL,
      [
        subjectId,
        ask.links?.len ?? null,
        ask.links?.since ?? null,
        markSinceParam(ask),
        ask.markSince !== undefined,
      ],
      PREPARED,
    );
    const r = rows[0];
    if (r === undefined) return null;
    const { links: l, facts, ledger, ...base } = r;
    return { base, links: l, facts, ledger };
  }

  /**
   * The current snapshot, the server's run (see ChainProbe.started), and whether it is a standby
   * in recovery (whose snapshots do not list the transactions in progress), in one cheap
   * statement.
   */
  async snapshot(): Promise<ServerSnapshot> {
    return guard('reading the decision chain', async () => {
      const { rows } = await this.db.query<ServerSnapshot>(
        `SELECT ${SERVER_SNAPSHOT_COLUMNS}`,
        [],
        PREPARED,
      );
      return serverSnapshotOf(rows[0]);
    });
  }

  /** The row versions of the links up to `len`, by seq, and the snapshot they were read in. */
  linkVersions(
    subjectId: string,
    len: number,
  ): Promise<{ versions: Map<number, string>; snapshotXmin: string }> {
    return guard('reading the decision chain', async () => {
      const { rows } = await this.db.query<{ seq: number; v: string; sx: string }>(
        `SELECT seq, xmin::text AS v, ${SNAPSHOT_XMIN} AS sx
         FROM decisions WHERE subject_id = $1 AND seq <= $2`,
        [subjectId, len],
      );
      return {
        versions: new Map(rows.map((r) => [r.seq, r.v])),
        snapshotXmin: rows[0]?.sx ?? '',
      };
    });
  }

  /** The links after `seq` (every link when `seq` is 0), in order, each with its row version. */
  linksAfter(subjectId: string, seq: number): Promise<VersionedLink[]> {
    return guard('reading the decision chain', async () => {
      const { rows } = await this.db.query<DecisionDbRow & { v: string }>(
        `SELECT ${decisionColumns}, xmin::text AS v FROM decisions
         WHERE subject_id = $1 AND ($2::int = 0 OR seq > $2::int) ORDER BY seq`,
        [subjectId, seq],
      );
      return rows.map((r) => ({ link: toLink(r), version: r.v }));
    });
  }

  /** The subject's facts with these ids. */
  facts(subjectId: string, ids: readonly string[]): Promise<Fact[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return guard('reading facts', async () => {
      const { rows } = await this.db.query<FactDbRow>(
        `SELECT ${FACT_COLUMNS} FROM facts WHERE subject_id = $1 AND id = ANY($2::text[])`,
        [subjectId, ids],
      );
      return rows.map(toFact);
    });
  }

  /** The ids and row versions of every fact the store shows as live. */
  activeVersions(subjectId: string): Promise<FactVersion[]> {
    return guard('reading live facts', async () => {
      const { rows } = await this.db.query<{ id: string; v: string }>(
        `SELECT id, xmin::text AS v FROM facts WHERE subject_id = $1 AND status = 'active'`,
        [subjectId],
      );
      return rows.map((r) => ({ id: r.id, version: r.v }));
    });
  }

  /**
   * What the ledger says of facts, read whole (it is small): the rows that name each fact (an
   * overturned one retracts nothing), with the words an owner's retraction signs, and the
   * restorations a probe-settled overturn names (`restoredId` + NUL + `originalId`).
   */
  ledgerFacts(
    subjectId: string,
  ): Promise<{ retracted: Map<string, RetractionContent[]>; settled: Set<string> }> {
    return guard('reading the retraction ledger', async () => {
      const { rows } = await this.db.query<{
        words: LedgerWords;
        fact_id: string | null;
        restored_fact_id: string | null;
        settles: boolean;
        overturned: boolean;
      }>(
        `SELECT ${ledgerWordsSql('retractions')} AS words, fact_id, restored_fact_id,
                verdict = 'overturned' AS overturned,
                (verdict = 'overturned' AND settled_probe_record_id IS NOT NULL) AS settles
         FROM retractions WHERE subject_id = $1`,
        [subjectId],
        PREPARED,
      );
      const retracted = new Map<string, RetractionContent[]>();
      const settled = new Set<string>();
      for (const r of rows) {
        if (r.fact_id !== null && !r.overturned) {
          const list = retracted.get(r.fact_id) ?? [];
          list.push(ledgerContent(subjectId, r.fact_id, r.words));
          retracted.set(r.fact_id, list);
        }
        if (r.settles && r.restored_fact_id !== null && r.fact_id !== null) {
          settled.add(`${r.restored_fact_id}\u0000${r.fact_id}`);
        }
      }
      return { retracted, settled };
    });
  }

  /** Stored-as-live facts with what could back them: promotion, receipt, ledger, restoration. */
  activeEvidence(
    subjectId: string,
    ids: readonly string[],
  ): Promise<Array<ActiveFactEvidence & { version: string }>> {
    if (ids.length === 0) return Promise.resolve([]);
    return guard('reading live facts', async () => {
      const { rows } = await this.db.query<
        FactDbRow & {
          v: string;
          promoted_by: ActiveFactEvidence['promotedBy'];
          receipt_tools: string[] | null;
          ledger_rows: LedgerWords[] | null;
          restoration_settled: boolean;
        }
      >(
        `SELECT ${prefixed('f')}, f.xmin::text AS v, f.promoted_by,
                CASE WHEN t.receipt_kind = 'tools' THEN t.receipt_tools END AS receipt_tools,
                (SELECT json_agg(${ledgerWordsSql('r')} ORDER BY r.id)
                 FROM retractions r WHERE r.subject_id = f.subject_id AND r.fact_id = f.id
                   AND r.verdict <> 'overturned') AS ledger_rows,
                EXISTS (SELECT 1 FROM retractions r
                        WHERE r.subject_id = f.subject_id AND r.restored_fact_id = f.id
                          AND r.fact_id = f.restored_from_id AND r.verdict = 'overturned'
                          AND r.settled_probe_record_id IS NOT NULL) AS restoration_settled
         FROM facts f LEFT JOIN turns t ON t.id = f.evidence_turn_id AND t.subject_id = f.subject_id
         WHERE f.subject_id = $1 AND f.id = ANY($2::text[]) AND f.status = 'active'`,
        [subjectId, ids],
      );
      const originals = new Map(
        (
          await this.facts(
            subjectId,
            rows.flatMap((r) => (r.restored_from_id === null ? [] : [r.restored_from_id])),
          )
        ).map((f) => [f.id, f]),
      );
      return rows.map((r) => ({
        fact: toFact(r),
        version: r.v,
        promotedBy: r.promoted_by,
        receiptTools: r.receipt_tools,
        retractions: (r.ledger_rows ?? []).map((w) => ledgerContent(subjectId, r.id, w)),
        restoration:
          r.restored_from_id === null
            ? null
            : {
                original: originals.get(r.restored_from_id) ?? null,
                settled: r.restoration_settled,
              },
      }));
    });
  }

  /** Facts the chain keeps live that the store does not show as live, with what explains it. */
  departed(subjectId: string, ids: readonly string[]): Promise<DepartedFactEvidence[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return guard('reading facts', async () => {
      const rows = await this.departures(subjectId, 'f.id = ANY($2::text[])', [ids]);
      const found = new Map(rows.map((r) => [r.id, r]));
      // A fact the chain approved that is gone from the table is departed too (deleted).
      return ids.map(
        (id) =>
          found.get(id) ?? {
            id,
            slot: '',
            key: null,
            status: 'proposed',
            validTo: null,
            retraction: null,
            supersededBy: null,
          },
      );
    });
  }

  /**
   * Facts that went live with no decision of their own (on a receipt, or restored) and are no
   * longer live, with what explains it, and what backed them: `tool`, `recordedAt` and
   * `restoredFrom` for the caller to check against the chain.
   */
  unsignedDeparted(subjectId: string): Promise<
    Array<
      DepartedFactEvidence & {
        promotedBy: string;
        origin: string;
        tool: string | null;
        recordedAt: Date;
        restoredFrom: string | null;
      }
    >
  > {
    return guard('reading facts', () =>
      this.departures(subjectId, `f.promoted_by IN ('receipt', 'restoration')`, []),
    );
  }

  private async departures(subjectId: string, where: string, params: unknown[]) {
    const { rows } = await this.db.query<{
      id: string;
      slot: string;
      key: string | null;
      status: FactStatus;
      valid_to: Date | null;
      promoted_by: string;
      origin: string;
      evidence_tool: string | null;
      recorded_at: Date;
      restored_from_id: string | null;
      ledger_row: LedgerWords | null;
      n_id: string | null;
      n_slot: string | null;
      n_key: string | null;
      n_supersedes_id: string | null;
      n_status: FactStatus | null;
      n_promoted_by: string | null;
      n_origin: string | null;
      n_tool: string | null;
      n_recorded_at: Date | null;
      n_restored_from_id: string | null;
      n_text: string | null;
      n_receipt_tools: string[] | null;
      n_restoration_settled: boolean | null;
    }>(
      `SELECT f.id, f.slot, f.key, f.status, f.valid_to, f.promoted_by, f.origin, f.evidence_tool,
              f.recorded_at, f.restored_from_id,
              (SELECT ${ledgerWordsSql('r')}
               FROM retractions r WHERE r.subject_id = f.subject_id
                 AND r.fact_id = f.id AND r.id = f.retraction_id) AS ledger_row,
              n.id AS n_id, n.slot AS n_slot, n.key AS n_key, n.supersedes_id AS n_supersedes_id,
              n.status AS n_status, n.promoted_by AS n_promoted_by, n.origin AS n_origin,
              n.evidence_tool AS n_tool, n.recorded_at AS n_recorded_at,
              n.restored_from_id AS n_restored_from_id, n.text AS n_text,
              (SELECT t.receipt_tools FROM turns t
               WHERE t.subject_id = n.subject_id AND t.session_id = n.evidence_session_id
                 AND t.seq = n.evidence_seq) AS n_receipt_tools,
              EXISTS (SELECT 1 FROM retractions r
                      WHERE r.subject_id = n.subject_id AND r.fact_id = n.restored_from_id
                        AND r.restored_fact_id = n.id AND r.verdict = 'overturned'
                        AND r.settled_probe_record_id IS NOT NULL) AS n_restoration_settled
       FROM facts f
       LEFT JOIN facts n ON n.subject_id = f.subject_id AND n.id = f.superseded_by_id
       WHERE f.subject_id = $1 AND f.status <> 'active' AND ${where}`,
      [subjectId, ...params],
    );
    return rows.map((r) => ({
      id: r.id,
      slot: r.slot,
      key: r.key,
      status: r.status,
      validTo:
        r.valid_to instanceof Date && Number.isFinite(r.valid_to.getTime()) ? r.valid_to : null,
      retraction: r.ledger_row === null ? null : ledgerContent(subjectId, r.id, r.ledger_row),
      supersededBy:
        r.n_id === null
          ? null
          : {
              id: r.n_id,
              slot: r.n_slot ?? '',
              key: r.n_key,
              supersedesId: r.n_supersedes_id,
              status: r.n_status ?? 'proposed',
              promotedBy: r.n_promoted_by,
              origin: r.n_origin ?? '',
              tool: r.n_tool,
              recordedAt:
                r.n_recorded_at instanceof Date && Number.isFinite(r.n_recorded_at.getTime())
                  ? r.n_recorded_at
                  : new Date(0),
              restoredFrom: r.n_restored_from_id,
              text: r.n_text ?? '',
              receiptTools: r.n_receipt_tools,
              restorationSettled: r.n_restoration_settled === true,
            },
      promotedBy: r.promoted_by,
      origin: r.origin,
      tool: r.evidence_tool,
      recordedAt: r.recorded_at instanceof Date ? r.recorded_at : new Date(0),
      restoredFrom: r.restored_from_id,
    }));
  }
}

/** FACT_COLUMNS qualified with a table alias. */
function prefixed(alias: string): string {
  return FACT_COLUMNS.split(',')
    .map((c) => `${alias}.${c.trim()}`)
    .join(', ');
}
