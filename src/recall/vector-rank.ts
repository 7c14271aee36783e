import type { FactStatus } from '../domain/fact.js';
import type { VectorMath } from '../domain/recall-index.js';
import type { RecallSql } from '../store/recall-sql.js';
import type { SqlExecutor } from '../store/sql-client.js';
import { VectorSql } from '../store/vector-sql.js';
import { factItem, isPrimary, SECONDARY_WEIGHT, turnItem } from './recall-items.js';
import type { RecallItem, RecallKind } from './recall-types.js';
import { checkDims } from './vectors.js';

/** Nearest turns read for the session max-similarity, however few items are asked for. */
export const DENSE_POOL = 50;

/**
 * The nearest turns ranked by their own similarity and their session's best (max-sim over the
 * session's turns among them), averaged: a turn in a session that holds a close match rises, as
 * a session is scored by its best turn rather than its sum. Not tuned: the two weigh the same.
 * Best first; ties by session, then seq.
 */
export function withSessionMaxSim<T extends { session: string; seq: number; similarity: number }>(
  near: readonly T[],
): (T & { score: number })[] {
  const best = new Map<string, number>();
  for (const n of near)
    best.set(n.session, Math.max(best.get(n.session) ?? -Infinity, n.similarity));
  return near
    .map((n) => ({ ...n, score: (n.similarity + (best.get(n.session) ?? n.similarity)) / 2 }))
    .sort(
      (a, b) =>
        b.score - a.score ||
        (a.session < b.session ? -1 : a.session > b.session ? 1 : 0) ||
        a.seq - b.seq,
    );
}

/** The query vector and where its neighbours are looked for. */
export interface VectorTarget {
  subject: string;
  model: string;
  /** The query, embedded and scaled to unit length. */
  vector: number[];
  /** The lengths stored for the model, read before the query was embedded. */
  stored: readonly number[];
  math: VectorMath;
}

/**
 * The nearest turns and facts by vector, as two ranked lists: turns by their own and their
 * session's best similarity (`withSessionMaxSim`), facts by similarity, secondary facts
 * discounted.
 */
export async function rankByVector(
  db: SqlExecutor,
  recallSql: RecallSql,
  target: VectorTarget,
  want: {
    kinds: ReadonlySet<RecallKind>;
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
    const pool = Math.max(want.k, DENSE_POOL);
    const near = withSessionMaxSim(
      await sql.nearestTurns(target.vector, want.session, pool, target.math),
    ).slice(0, want.k);
    const rows = new Map(
      (await recallSql.turnMeta(near, false)).map((m) => [`${m.session}#${m.seq}`, m.turn]),
    );
    lists.push(
      near.flatMap((n) => {
        const row = rows.get(`${n.session}#${n.seq}`);
        return row === undefined ? [] : [turnItem(n.session, n.seq, row, n.score)];
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
