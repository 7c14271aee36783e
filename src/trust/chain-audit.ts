import type { Fact } from '../domain/fact.js';
import {
  decidesProposal,
  retractionPayload,
  verifyChain,
  type ChainBreakCode,
  type ChainCrypto,
  type ChainReport,
} from '../domain/decision-chain.js';
import { EngineError } from '../domain/errors.js';
import { shownId } from '../domain/shown-text.js';
import { delegationProblems, judgeFacts, wasBacked, type TrustView } from '../domain/trust.js';
import { ChainState, factContentHash } from '../domain/chain-state.js';
import { DecisionSql } from '../store/decision-sql.js';
import { FactSql } from '../store/fact-sql.js';
import { RetractionSql } from '../store/retraction-sql.js';
import { parseForgetNote } from '../domain/forget.js';
import { SlotSql } from '../store/slot-sql.js';
import type { SqlExecutor } from '../store/sql-client.js';
import { SubjectSql } from '../store/subject-sql.js';
import { TrustSql } from './trust-sql.js';

/** A head the owner recorded outside the store (the head file beside the key file). */
export interface SignedHead {
  seq: number;
  hash: string;
  /** The hash of link 1 when the head was recorded: a chain with another first link is not it. */
  root?: string;
}

/**
 * The full check, from the first link: every link, every decided proposal's content, every
 * status out of the pile, every slot delegation, and the heads recorded outside the tables.
 * `owner`: the head the owner recorded, or how to pick it from the chain's link 1 (an anchor's
 * heads are recorded per store, or per chain by its first link).
 */
export async function auditChain(
  db: SqlExecutor,
  subjectId: string,
  deps: { crypto: ChainCrypto; clock: () => Date },
  owner?: SignedHead | ((root: string | null) => SignedHead | undefined),
): Promise<ChainReport> {
  const subject = await new SubjectSql(db).get(subjectId);
  if (subject === null)
    throw new EngineError('SUBJECT_NOT_FOUND', `subject "${subjectId}" does not exist`);
  const links = await new DecisionSql(db).chain(subjectId);
  if ((subject.ownerPublicKey === null || subject.ownerKeyId === null) && links.length > 0) {
    return {
      ok: false,
      length: links.length,
      brokenAt: 1,
      code: 'KEY_MISMATCH',
      reason: 'the subject has decisions but no owner key',
    };
  }
  const opts = {
    crypto: deps.crypto,
    publicKeyPem: subject.ownerPublicKey ?? '',
    keyId: subject.ownerKeyId ?? '',
  };
  const trustSql = new TrustSql(db);
  const decidedIds = [...new Set(links.filter((l) => decidesProposal(l)).map((l) => l.proposalId))];
  const facts = new Map<string, Fact>(
    (await trustSql.facts(subjectId, decidedIds)).map((f) => [f.id, f]),
  );
  // a decided proposal a forget link names is gone on the owner's word: its link stands as signed
  const forgotten = new Set(
    links.flatMap((l) =>
      l.decision === 'forget'
        ? (parseForgetNote(l.note, l.contentHash, (x) => deps.crypto.sha256Hex(x))?.facts ?? [])
        : [],
    ),
  );
  const signedHash = new Map(
    links.filter(decidesProposal).map((l) => [l.proposalId, l.contentHash]),
  );
  const report = verifyChain(links, {
    ...opts,
    currentContentHash: (id) => {
      const f = facts.get(id);
      if (f === undefined) return forgotten.has(id) ? (signedHash.get(id) ?? null) : null;
      return factContentHash(f, deps.crypto);
    },
  });
  const state = new ChainState(subjectId, opts);
  state.extend(links, (id) => facts.get(id) ?? null, deps.crypto);
  if (!report.ok) {
    // a damaged signature a later one covers: reads go on, as ChainState.extend says why
    if (report.code !== 'BAD_SIGNATURE' || state.length < report.brokenAt) return report;
    return {
      ...report,
      reason: `${report.reason}; link ${state.length}'s signature covers its content (it was signed after a check of the chain under the owner's key), so reads show what the owner's key accepted, but something other than memledger rewrote this link's signature`,
    };
  }
  const signedHead = typeof owner === 'function' ? owner(links[0]?.hash ?? null) : owner;
  const length = links.length;
  const broken = (brokenAt: number, code: ChainBreakCode, reason: string): ChainReport => ({
    ok: false,
    length,
    brokenAt,
    code,
    reason,
  });

  // heads recorded outside the decisions table: the owner's head file, the arrivals
  const probe = await trustSql.probe(subjectId);
  const heads: Array<{ seq: number; hash: string; who: string }> = [];
  if (signedHead !== undefined) heads.push({ ...signedHead, who: "the owner's head file" });
  if (probe?.seen != null)
    heads.push({ seq: probe.seen.length, hash: probe.seen.hash, who: 'an arrival' });
  if (signedHead?.root !== undefined && links[0]?.hash !== signedHead.root) {
    return broken(
      1,
      'HEAD_CUT',
      "the owner's head file records another first link than the chain holds",
    );
  }
  for (const h of heads) {
    const at = links[h.seq - 1];
    if (at === undefined || at.hash !== h.hash) {
      return broken(
        Math.min(h.seq, length + 1),
        'HEAD_CUT',
        at === undefined
          ? `${h.who} recorded link ${h.seq}, but the chain ends at link ${length}`
          : `${h.who} recorded another link ${h.seq} than the chain holds`,
      );
    }
  }

  // delegations: a slot's stored auto-live setting must be what its last delegation signed
  const slotProblem = delegationProblems(state, await new SlotSql(db).list(subjectId))[0];
  if (slotProblem !== undefined) {
    return broken(slotProblem.seq ?? length + 1, slotProblem.code, slotProblem.reason);
  }

  // every stored-as-live fact must be backed, and every approved fact's departure explained
  const active = await trustSql.activeEvidence(
    subjectId,
    (await trustSql.activeVersions(subjectId)).map((v) => v.id),
  );
  const activeIds = new Set<string>(active.map((e) => e.fact.id));
  const departed = [
    ...(await trustSql.departed(
      subjectId,
      state.chainLive().filter((id) => !activeIds.has(id)),
    )),
    ...(await trustSql.unsignedDeparted(subjectId)).filter((u) =>
      wasBacked(state, u, subjectId, deps.crypto),
    ),
  ];
  const judged = judgeFacts(state, active, departed, deps.clock(), deps.crypto);
  const w = judged.withheld[0];
  if (w !== undefined) {
    const seq = state.decided.get(w.fact.id)?.seq ?? length + 1;
    return broken(seq, w.code, `fact ${w.fact.id}: ${w.reason}`);
  }
  const u = judged.unexplained[0];
  if (u !== undefined) {
    return broken(state.approved.get(u.id)?.seq ?? length + 1, u.code, `fact ${u.id}: ${u.reason}`);
  }
  const status = await statusProblem(subjectId, state, new FactSql(db));
  if (status !== null) return { ok: false, length, ...status };
  // every ledger row the owner signed is there, as signed (reads show no words of one that is not)
  if (state.retractions.size > 0) {
    const rows = new Map(
      (await new RetractionSql(db).list(subjectId, {})).map((r) => [r.id as string, r]),
    );
    for (const [id, link] of state.retractions) {
      // a row the owner forgot later is gone on the owner's word
      if ((state.forgottenRetractions.get(id) ?? 0) > link.seq) continue;
      const row = rows.get(id);
      const hash =
        row === undefined || row.factId === null
          ? null
          : deps.crypto.sha256Hex(retractionPayload({ ...row, factId: row.factId, subjectId }));
      if (hash !== link.contentHash) {
        return broken(
          link.seq,
          'CONTENT_CHANGED',
          `retraction ${shownId(id)}, signed at link ${link.seq}, is ${row === undefined ? 'missing' : 'changed since the owner signed it'}`,
        );
      }
    }
  }
  return report;
}

/** Where a chain stops being trusted, and why: a ChainReport's failure without its length. */
export interface ChainProblem {
  brokenAt: number;
  code: ChainBreakCode;
  reason: string;
}

/**
 * Facts out of the pile that are not live: each must agree with its last decision (approve:
 * superseded, retracted or expired; reject: rejected), or have no decision for a reason the
 * store can show: an action promoted on a receipt in a delegated slot, or a restoration.
 */
async function statusProblem(
  subjectId: string,
  state: ChainState,
  facts: FactSql,
): Promise<ChainProblem | null> {
  const rows = await facts.decisionAudit(subjectId);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const delegated = (slot: string, tool: string | null, at: Date) => {
    const d = state.delegationAt(slot, at);
    return d !== undefined && d.autoLive && tool !== null && d.tools.includes(tool);
  };
  const justified = (id: string, depth: number): boolean => {
    const row = byId.get(id);
    if (row === undefined || depth > 32) return false;
    const link = state.decided.get(id);
    if (link !== undefined) return link.decision === 'approve';
    if (row.receiptOk && delegated(row.slot, row.tool, row.recordedAt)) return true;
    return row.restoredOriginal !== null && justified(row.restoredOriginal, depth + 1);
  };
  for (const row of rows) {
    const link = state.decided.get(row.id);
    if (link !== undefined) {
      const ok =
        link.decision === 'approve'
          ? ['active', 'superseded', 'retracted', 'expired'].includes(row.status)
          : row.status === 'rejected';
      if (!ok) {
        return {
          brokenAt: link.seq,
          code: 'STATUS_MISMATCH',
          reason: `fact ${row.id} is ${row.status}, but its decision (link ${link.seq}) was ${link.decision}`,
        };
      }
    } else if (!justified(row.id, 0)) {
      return {
        brokenAt: state.length + 1,
        code: 'MISSING_DECISION',
        reason: `fact ${row.id} is ${row.status} with no decision in the chain and no receipt or restoration that explains it`,
      };
    }
  }
  return null;
}

/**
 * What an owner decision refuses (CHAIN_BROKEN), from the trust view its transaction sees and
 * the chain it was judged by: what a read would warn about (a broken chain, a cut head, a live
 * fact nothing backs, an approved fact gone with nothing to explain it, a delegation changed),
 * then a status out of the pile that its decision does not explain. No link is verified again.
 */
export async function decisionProblem(
  db: SqlExecutor,
  subjectId: string,
  view: TrustView,
  state: ChainState,
): Promise<ChainProblem | null> {
  const { broken, headCut } = view.chain;
  if (broken !== null) return broken;
  const end = state.length + 1;
  if (headCut !== null)
    return {
      brokenAt: Math.min(headCut.expected.seq, end),
      code: 'HEAD_CUT',
      reason: headCut.reason,
    };
  const w = view.withheld[0];
  if (w !== undefined)
    return {
      brokenAt: state.decided.get(w.fact.id)?.seq ?? end,
      code: w.code,
      reason: `fact ${w.fact.id}: ${w.reason}`,
    };
  // an approved fact an unsigned ledger row took down stops nothing: the owner signs that row,
  // or the fact was only hidden (reads name it); refusing every decision over it would let any
  // writer of the ledger stop the owner
  const u = view.unexplained.find((x) => x.retraction === undefined);
  if (u !== undefined)
    return {
      brokenAt: state.approved.get(u.id)?.seq ?? end,
      code: u.code,
      reason: `fact ${u.id}: ${u.reason}`,
    };
  const d = view.delegations[0];
  if (d !== undefined) return { brokenAt: d.seq ?? end, code: d.code, reason: d.reason };
  return statusProblem(subjectId, state, new FactSql(db));
}
