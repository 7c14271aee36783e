import { analyze } from '../domain/text/analyze.js';
import { EngineError } from '../domain/errors.js';
import { sessionNotFound } from '../domain/session.js';
import { viewIndex, type TrustView } from '../domain/trust.js';
import type { TrustReader } from '../trust/trust-types.js';
import { RecallSql } from '../store/recall-sql.js';
import type { SqlClient, SqlExecutor } from '../store/sql-client.js';
import { VectorSql } from '../store/vector-sql.js';
import { embedPending } from './embed-pending.js';
import type { Embedder } from './embedder.js';
import { rankFacts } from './fact-rank.js';
import { lexicalSearch } from './lexical-search.js';
import { fuse } from './recall-fusion.js';
import { factItem, rowOfFact, turnItem } from './recall-items.js';
import { parseRecallOptions } from './recall-options.js';
import type { RecallApi, RecallItem, RecallOptions, VectorsApi } from './recall-types.js';
import {
  relevantSearch,
  type RelevantItem,
  type RelevantSearchOptions,
} from './relevant-search.js';
import { callEmbedder, unitVector } from './vectors.js';
import { rankByVector } from './vector-rank.js';

/** What the recall module is built from: the store, and the engine's embedder if it has one. */
export interface RecallModuleDeps {
  client: SqlClient;
  /** What live memory may show: a fact stored as live comes back only when it verifies. */
  trust: TrustReader;
  embedder?: Embedder;
}

/** Recall and vectors, created once per engine; each hands out APIs bound to one subject. */
export interface RecallModule {
  /** Recall over one subject's turns and facts (the subject must exist). */
  recall(subjectId: string): RecallApi;
  /** The vectors of one subject's turns and facts (the subject must exist). */
  vectors(subjectId: string): VectorsApi;
  /**
   * The bounded recall arrival's `relevant` block runs for an incoming message (lexical,
   * smaller budgets, facts from the arrival's trust view; relevant-search.ts). Not part of the
   * public API: `search` is unchanged by it.
   */
  relevant(
    subjectId: string,
    query: string,
    options: RelevantSearchOptions,
  ): Promise<RelevantItem[]>;
}

/**
 * The recall module. Recall reads inside a read-only transaction, so the database refuses any
 * write made on its behalf; vectors are made only by `embedPending`.
 */
export function createRecallModule(deps: RecallModuleDeps): RecallModule {
  const { client, embedder, trust } = deps;
  const readOnly = <T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> =>
    client.transaction(async (tx) => {
      await tx.exec('SET TRANSACTION READ ONLY');
      return fn(tx);
    });

  const search = async (
    subject: string,
    query: string,
    options: RecallOptions = {},
  ): Promise<RecallItem[]> => {
    const { k, kinds, session, params: p, statuses } = parseRecallOptions(query, options);
    if (options.vectors === true && embedder === undefined) {
      throw new EngineError('NO_EMBEDDER', 'recall was asked for vectors, but no embedder is set');
    }
    // the query is embedded before the transaction (no remote call holds it open), and only
    // when the subject has vectors of the embedder's model: until then recall stays lexical
    // and does not depend on the embedder
    let vector: number[] | null = null;
    let stored: readonly number[] = [];
    if (embedder !== undefined && options.vectors !== false && p.vectorWeight > 0) {
      stored = await new VectorSql(client, subject, embedder.model).storedDims();
      if (stored.length > 0) {
        const [answer] = await callEmbedder(embedder, [query]);
        vector = unitVector(answer as number[], 'the query');
      }
    }
    // a fact the store holds as live is shown only as the trust view verified it. The view is
    // read beside the ranking, and applied after the ranking's transaction has closed: it needs
    // connections of its own, and a transaction must never wait on it while holding one
    // (PGlite's queue, a pool's limit).
    const viewing = kinds.has('fact') ? trust.view(subject) : Promise.resolve(null);
    viewing.catch(() => undefined);
    const trusted = (view: TrustView | null) => {
      const index = view === null ? null : viewIndex(view);
      const shown = (item: RecallItem): RecallItem | null => {
        if (item.kind !== 'fact' || item.passport.status !== 'active' || view === null) return item;
        // shown as the verified fact, not as the row the ranking read (which may have changed)
        const live = index?.live.get(item.id);
        if (live !== undefined) return factItem(rowOfFact(live), item.score);
        if (options.includeHistory !== true) return null;
        const expired = index?.expired.has(item.id) === true;
        return {
          ...item,
          passport: { ...item.passport, status: expired ? 'expired' : 'unverified' },
        };
      };
      return (items: RecallItem[]): RecallItem[] =>
        items.flatMap((i) => {
          const s = shown(i);
          return s === null ? [] : [s];
        });
    };
    // each list, and whether the trust view filters it (`cut`: and then keeps the best k)
    type Ranked = { items: RecallItem[]; weight: number; trust: 'none' | 'filter' | 'cut' };
    const ranked = await readOnly(async (tx): Promise<Ranked[]> => {
      const sql = new RecallSql(tx, subject);
      const analysed = analyze(query);
      const terms = new Map<string, number>();
      for (const t of analysed) terms.set(t, (terms.get(t) ?? 0) + 1);
      const { sessionExists, ...lookup } = await sql.scopedLookup([...terms.keys()], session);
      if (session !== null && !sessionExists) throw sessionNotFound(session);
      const lists: Ranked[] = [];
      if (kinds.has('turn')) {
        const ranked = await lexicalSearch(sql.port(), query, {
          limit: k,
          params: p,
          terms: analysed,
          lookup,
          ...(session === null ? {} : { session }),
        });
        const items = ranked.map((r) => turnItem(r.session, r.seq, r.turn, r.score));
        lists.push({ items, weight: 1, trust: 'none' });
      }
      if (kinds.has('fact')) {
        const ranked = await rankFacts(sql, terms, lookup, statuses, session, p);
        lists.push({
          items: ranked.map((f) => factItem(f.row, f.score)),
          weight: 1,
          trust: 'cut',
        });
      }
      // (a vector weight of 0 leaves the query unembedded: its items would all score 0)
      if (vector !== null && embedder !== undefined) {
        const math = client.capabilities.vectorType ? 'pgvector' : 'plain';
        const near = await rankByVector(
          tx,
          sql,
          { subject, model: embedder.model, vector, stored, math },
          { kinds, statuses, session, k },
        );
        for (const items of near) lists.push({ items, weight: p.vectorWeight, trust: 'filter' });
      }
      return lists;
    });
    const keep = trusted(await viewing);
    return fuse(
      ranked.map((l) => ({
        weight: l.weight,
        items:
          l.trust === 'none'
            ? l.items
            : l.trust === 'cut'
              ? keep(l.items).slice(0, k)
              : keep(l.items),
      })),
      k,
    );
  };

  return {
    relevant: (subjectId, query, options) => relevantSearch(client, subjectId, query, options),
    recall: (subjectId) => ({
      search: (query, options) => search(subjectId, query, options),
    }),
    vectors: (subjectId) => ({
      embedPending(options) {
        if (embedder === undefined) {
          return Promise.reject(
            new EngineError('NO_EMBEDDER', 'no embedder is set: pass `embedder` to createEngine'),
          );
        }
        return embedPending({ client, embedder }, subjectId, options);
      },
    }),
  };
}
