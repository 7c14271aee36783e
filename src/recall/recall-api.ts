import { EngineError } from '../domain/errors.js';
import { FACT_STATUSES, type FactOrigin, type FactStatus } from '../domain/fact.js';
import type { Receipt } from '../domain/receipt.js';
import { requireId, type TurnRole } from '../domain/turn.js';
import { RecallSql, type RecalledFactRow } from '../store/recall-sql.js';
import type { SqlClient, SqlExecutor } from '../store/sql-client.js';
import { VectorSql } from '../store/vector-sql.js';
import { analyze } from '../domain/analyze.js';
import type { Embedder } from './embedder.js';
import {
  DEFAULT_RANK_PARAMS,
  idf,
  type CorpusStats,
  type RankParams,
  type TermStat,
} from './lexical-rank.js';
import { lexicalSearch, type RecalledTurn } from './lexical-search.js';
import { callEmbedder, checkDims, unitVector } from './vectors.js';

export const RECALL_KINDS = ['turn', 'fact'] as const;
export type RecallKind = (typeof RECALL_KINDS)[number];

export interface RecallOptions {
  subject?: string;
  /** How many items (1–200, default 10). */
  k?: number;
  /** Only this session's turns, and facts whose evidence is in it. */
  session?: string;
  /** Also facts that are not live (proposed, rejected, retracted, superseded, …), labelled. */
  includeHistory?: boolean;
  /** Which kinds of memory (default both). */
  kinds?: readonly RecallKind[];
  /** Ranking parameters, for benchmarks and ablations. */
  params?: Partial<RankParams>;
  /**
   * Also rank by vector similarity (fused with the lexical ranking). Default: when the engine
   * has an embedder. `true` without one is an error; `false` keeps recall lexical.
   */
  vectors?: boolean;
}

/** Where a recalled item comes from and what it is worth as evidence. */
export interface RecallPassport {
  /** `turn` for a recorded turn; a fact's origin otherwise. */
  origin: 'turn' | FactOrigin;
  /** Turns and did/saw facts are primary evidence; inferred and summarized facts are not. */
  primary: boolean;
  /** `recorded` for a turn; a fact's status. */
  status: 'recorded' | FactStatus;
  /** When the turn was said, or the fact recorded (ISO 8601). */
  date: string;
  sessionId: string | null;
  /** The turn's seq, or the seq of the fact's evidence turn. */
  turn: number | null;
  role?: TurnRole;
  speaker?: string | null;
  receipt?: Receipt | null;
  slot?: string;
  key?: string | null;
  attested?: boolean;
  evidence?: { turnId: string | null; quote: string | null; tool: string | null };
  validFrom?: string | null;
  validTo?: string | null;
}

export interface RecallItem {
  kind: RecallKind;
  id: string;
  text: string;
  /** Fused rank score: higher first. Comparable within one answer only. */
  score: number;
  passport: RecallPassport;
}

export interface RecallApi {
  /** Ranked memories for a query, each with its passport. Reads only; never writes. */
  recall(query: string, options?: RecallOptions): Promise<RecallItem[]>;
}

const MAX_K = 200;
const DEFAULT_K = 10;
/** Reciprocal-rank fusion constant: the usual 60. */
const RRF_K = 60;
/** An inferred or summarized fact's lexical score is discounted by this much. */
const SECONDARY_WEIGHT = 0.8;
const FACT_CANDIDATES = 200;
/** Facts are fetched by the query's rarer terms while their summed df stays under this. */
const FACT_TERM_BUDGET = 2000;

/** Ranking parameters that count things (documents, terms, sessions, postings). */
const COUNT_PARAMS: ReadonlySet<string> = new Set([
  'feedbackDocs',
  'feedbackTerms',
  'boostPool',
  'postingBudget',
  'candidateSessions',
]);

const isPrimary = (origin: 'turn' | FactOrigin): boolean =>
  origin === 'turn' || origin === 'did' || origin === 'saw';

function parseOptions(options: RecallOptions): {
  k: number;
  kinds: Set<RecallKind>;
  session: string | null;
} {
  if (options.vectors !== undefined && typeof options.vectors !== 'boolean') {
    throw new EngineError('INVALID_ARGUMENT', 'vectors must be true or false');
  }
  const k = options.k ?? DEFAULT_K;
  if (!Number.isInteger(k) || k < 1 || k > MAX_K) {
    throw new EngineError('INVALID_ARGUMENT', `k must be a whole number from 1 to ${MAX_K}`);
  }
  const kinds = new Set(options.kinds ?? RECALL_KINDS);
  for (const kind of kinds) {
    if (!RECALL_KINDS.includes(kind)) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        `unknown kind "${String(kind)}": use ${RECALL_KINDS.join(' or ')}`,
      );
    }
  }
  if (kinds.size === 0) throw new EngineError('INVALID_ARGUMENT', 'kinds cannot be empty');
  const session = options.session === undefined ? null : requireId(options.session, 'session');
  for (const [name, value] of Object.entries(options.params ?? {})) {
    if (!(name in DEFAULT_RANK_PARAMS)) {
      throw new EngineError('INVALID_ARGUMENT', `unknown ranking parameter "${name}"`);
    }
    const whole = COUNT_PARAMS.has(name);
    if (
      typeof value !== 'number' ||
      !Number.isFinite(value) ||
      value < 0 ||
      (whole && !Number.isInteger(value))
    ) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        `ranking parameter ${name} must be a ${whole ? 'whole ' : ''}number of at least 0`,
      );
    }
  }
  return { k, kinds, session };
}

function turnItem(session: string, seq: number, row: RecalledTurn, score: number): RecallItem {
  return {
    kind: 'turn',
    id: row.id,
    text: row.content,
    score,
    passport: {
      origin: 'turn',
      primary: true,
      status: 'recorded',
      date: row.recordedAt.toISOString(),
      sessionId: session,
      turn: seq,
      role: row.role,
      speaker: row.speaker,
      receipt: row.receipt,
    },
  };
}

function factItem(row: RecalledFactRow, score: number): RecallItem {
  return {
    kind: 'fact',
    id: row.id,
    text: row.text,
    score,
    passport: {
      origin: row.origin,
      primary: isPrimary(row.origin),
      status: row.status,
      date: row.recordedAt.toISOString(),
      sessionId: row.evidenceSessionId,
      turn: row.evidenceSeq,
      slot: row.slot,
      key: row.key,
      attested: row.attested,
      evidence: { turnId: row.evidenceTurnId, quote: row.evidenceQuote, tool: row.evidenceTool },
      validFrom: row.validFrom?.toISOString() ?? null,
      validTo: row.validTo?.toISOString() ?? null,
    },
  };
}

/**
 * Plain BM25 over a fact's terms, with the turn corpus's statistics; secondary facts discounted.
 * Candidates are the facts holding the query's rarer terms (ascending df, within a budget).
 */
async function rankFacts(
  sql: RecallSql,
  query: ReadonlyMap<string, number>,
  lookup: { corpus: CorpusStats; terms: ReadonlyMap<string, TermStat> },
  statuses: readonly FactStatus[],
  session: string | null,
  p: RankParams,
): Promise<{ row: RecalledFactRow; score: number }[]> {
  if (query.size === 0) return [];
  const df = (t: string): number => lookup.terms.get(t)?.df ?? 0;
  const byRarity = [...query.keys()].sort((a, b) => df(a) - df(b) || (a < b ? -1 : 1));
  const pick: string[] = [];
  let used = 0;
  for (const t of byRarity) {
    if (pick.length > 0 && used + df(t) > FACT_TERM_BUDGET) break;
    pick.push(t);
    used += df(t);
  }
  const rows = await sql.factCandidates(pick, statuses, session, FACT_CANDIDATES);
  const n = Math.max(lookup.corpus.turns, 1);
  const avgLen = lookup.corpus.turns === 0 ? 8 : lookup.corpus.totalLen / lookup.corpus.turns;
  return rows
    .map((row) => {
      const tf = new Map<string, number>();
      for (const t of row.terms) tf.set(t, (tf.get(t) ?? 0) + 1);
      let score = 0;
      for (const [term, weight] of query) {
        const f = tf.get(term) ?? 0;
        if (f === 0) continue;
        const norm = p.k1 * (1 - p.b + (p.b * row.terms.length) / avgLen);
        score += (weight * idf(n, df(term), p.idfFloor) * f * (p.k1 + 1)) / (f + norm);
      }
      const primary = isPrimary(row.origin);
      return { row, primary, score: primary ? score : score * SECONDARY_WEIGHT };
    })
    .filter((s) => s.score > 0)
    .sort(
      (a, b) =>
        b.score - a.score ||
        Number(b.primary) - Number(a.primary) ||
        (a.row.id < b.row.id ? -1 : 1),
    );
}

/**
 * Fuses ranked lists by weighted reciprocal rank (weight / (60 + rank)); at equal score primary
 * evidence comes first.
 */
function fuse(lists: readonly { items: RecallItem[]; weight: number }[], k: number): RecallItem[] {
  const fused = new Map<string, RecallItem>();
  for (const { items, weight } of lists) {
    items.forEach((item, rank) => {
      const key = `${item.kind}:${item.id}`;
      const prev = fused.get(key);
      const score = (prev?.score ?? 0) + weight / (RRF_K + rank + 1);
      fused.set(key, { ...(prev ?? item), score });
    });
  }
  return [...fused.values()]
    .sort(
      (a, b) =>
        b.score - a.score ||
        Number(b.passport.primary) - Number(a.passport.primary) ||
        (a.kind === b.kind ? 0 : a.kind === 'turn' ? -1 : 1) ||
        (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    )
    .slice(0, k);
}

/** The nearest turns and facts by vector, as two ranked lists; secondary facts discounted. */
async function rankByVector(
  db: SqlExecutor,
  recallSql: RecallSql,
  target: {
    subject: string;
    model: string;
    vector: number[];
    /** The lengths stored for the model, read before the query was embedded. */
    stored: readonly number[];
    math: 'pgvector' | 'plain';
  },
  want: {
    kinds: Set<RecallKind>;
    statuses: readonly FactStatus[];
    session: string | null;
    k: number;
  },
): Promise<RecallItem[][]> {
  const sql = new VectorSql(db, target.subject, target.model);
  checkDims(target.model, target.vector.length, target.stored);
  if (target.math === 'pgvector') await sql.iterativeScans();
  const lists: RecallItem[][] = [];
  if (want.kinds.has('turn')) {
    const near = await sql.nearestTurns(target.vector, want.session, want.k, target.math);
    const rows = new Map(
      (await recallSql.turnMeta(near, false)).map((m) => [`${m.session}#${m.seq}`, m.turn]),
    );
    lists.push(
      near.flatMap((n) => {
        const row = rows.get(`${n.session}#${n.seq}`);
        return row === undefined ? [] : [turnItem(n.session, n.seq, row, n.similarity)];
      }),
    );
  }
  if (want.kinds.has('fact')) {
    const near = await sql.nearestFacts(
      target.vector,
      want.statuses,
      want.session,
      want.k,
      target.math,
    );
    lists.push(
      near
        .map((n) => {
          const primary = isPrimary(n.row.origin);
          return { n, primary, score: primary ? n.similarity : n.similarity * SECONDARY_WEIGHT };
        })
        .sort(
          (a, b) =>
            b.score - a.score ||
            Number(b.primary) - Number(a.primary) ||
            (a.n.row.id < b.n.row.id ? -1 : 1),
        )
        .map((x) => factItem(x.n.row, x.score)),
    );
  }
  return lists;
}

export function createRecallApi(deps: {
  client: SqlClient;
  defaultSubject: string;
  embedder?: Embedder;
}): RecallApi {
  const readOnly = <T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> =>
    deps.client.transaction(async (tx) => {
      // recall never writes: the database refuses any write made on its behalf
      await tx.exec('SET TRANSACTION READ ONLY');
      return fn(tx);
    });

  return {
    async recall(query, options = {}) {
      if (typeof query !== 'string' || query.trim() === '') {
        throw new EngineError('EMPTY_TEXT', 'a recall query is required');
      }
      const subject = requireId(options.subject ?? deps.defaultSubject, 'subject');
      const { k, kinds, session } = parseOptions(options);
      const p: RankParams = { ...DEFAULT_RANK_PARAMS, ...options.params };
      const embedder = deps.embedder;
      if (options.vectors === true && embedder === undefined) {
        throw new EngineError(
          'NO_EMBEDDER',
          'recall was asked for vectors, but no embedder is set',
        );
      }
      // the query is embedded before the transaction (no remote call holds it open), and only
      // when the subject has vectors of the embedder's model: until then recall stays lexical
      // and does not depend on the embedder
      let vector: number[] | null = null;
      let stored: readonly number[] = [];
      if (embedder !== undefined && options.vectors !== false && p.vectorWeight > 0) {
        stored = await new VectorSql(deps.client, subject, embedder.model).storedDims();
        if (stored.length > 0) {
          const [answer] = await callEmbedder(embedder, [query]);
          vector = unitVector(answer as number[], 'the query');
        }
      }
      const statuses: readonly FactStatus[] =
        options.includeHistory === true ? FACT_STATUSES : ['active'];
      return readOnly(async (tx) => {
        const sql = new RecallSql(tx, subject);
        const analysed = analyze(query);
        const terms = new Map<string, number>();
        for (const t of analysed) terms.set(t, (terms.get(t) ?? 0) + 1);
        const { subjectExists, sessionExists, ...lookup } = await sql.scopedLookup(
          [...terms.keys()],
          session,
        );
        if (!subjectExists) {
          throw new EngineError('SUBJECT_NOT_FOUND', `subject "${subject}" does not exist`);
        }
        if (session !== null && !sessionExists) {
          throw new EngineError(
            'SESSION_NOT_FOUND',
            `no session "${session}" for subject "${subject}"`,
          );
        }
        const lists: { items: RecallItem[]; weight: number }[] = [];
        if (kinds.has('turn')) {
          const ranked = await lexicalSearch(sql.port(), query, {
            limit: k,
            params: p,
            terms: analysed,
            lookup,
            ...(session === null ? {} : { session }),
          });
          const items = ranked.map((r) => turnItem(r.session, r.seq, r.turn, r.score));
          lists.push({ items, weight: 1 });
        }
        if (kinds.has('fact')) {
          const ranked = await rankFacts(sql, terms, lookup, statuses, session, p);
          lists.push({ items: ranked.slice(0, k).map((f) => factItem(f.row, f.score)), weight: 1 });
        }
        // (a vector weight of 0 leaves the query unembedded: its items would all score 0)
        if (vector !== null && embedder !== undefined) {
          const math = deps.client.capabilities.vectorType ? 'pgvector' : 'plain';
          const near = await rankByVector(
            tx,
            sql,
            { subject, model: embedder.model, vector, stored, math },
            { kinds, statuses, session, k },
          );
          for (const items of near) lists.push({ items, weight: p.vectorWeight });
        }
        return fuse(lists, k);
      });
    },
  };
}
