import {
  checkLink,
  decidesProposal,
  delegationPayload,
  delegationTarget,
  nextLinkFields,
  revocationTarget,
  tokenRevocationPayload,
  sealLink,
  verifyChain,
  type ChainBreakCode,
  type ChainCrypto,
  type ChainReport,
  type Decision,
  type DecisionLink,
  type DelegationBound,
  type LinkSigner,
} from '../domain/decision-chain.js';
import { EngineError } from '../domain/errors.js';
import { TokenSql } from '../store/token-sql.js';
import type { Fact } from '../domain/fact.js';
import {
  ChainState,
  delegationNote,
  factContentHash,
  delegationProblems,
  judgeFacts,
  wasBacked,
} from '../domain/trust.js';
import type { SqlClient, SqlExecutor } from '../store/sql-client.js';
import { DecisionSql, lockChain } from '../store/decision-sql.js';
import { FactSql } from '../store/fact-sql.js';
import { SlotSql } from '../store/slot-sql.js';
import { SubjectSql } from '../store/subject-sql.js';
import { TrustSql } from '../store/trust-sql.js';
import type { HeldTrust, TrustVerifier } from './trust-verifier.js';

/** Signs with the owner's private key; only a process holding the key file and passphrase has one. */
export type OwnerSigner = LinkSigner & { publicKeyPem: string };

export interface DecideInput {
  /** The subject whose proposal it is; another subject's proposal is PROPOSAL_NOT_FOUND. */
  subjectId: string;
  proposalId: string;
  decision: Decision;
  note?: string;
  /** Approve an older value over a newer live one for the same slot and key (see docs/TRUST.md). */
  supersede?: boolean;
  signer: OwnerSigner;
}

export interface DecideResult {
  proposalId: string;
  decision: Decision;
  status: Fact['status'];
  seq: number;
  hash: string;
  /** The hash of the chain's link 1 (for a head recorded outside the store). */
  root: string;
  superseded: string | null;
}

export interface DelegateInput {
  subjectId: string;
  slot: string;
  /** false revokes the delegation. */
  autoLive: boolean;
  tools: readonly string[];
  /** What its receipt-promoted facts may say (null with a revocation). */
  bound: DelegationBound | null;
  note?: string;
  signer: OwnerSigner;
}

export interface DelegateResult {
  slot: string;
  autoLive: boolean;
  tools: string[];
  bound: DelegationBound | null;
  seq: number;
  hash: string;
  root: string;
}

/** A head the owner recorded outside the store (the head file beside the key file). */
export interface SignedHead {
  seq: number;
  hash: string;
  /** The hash of link 1 when the head was recorded: a chain with another first link is not it. */
  root?: string;
}

const chainBroken = (brokenAt: number, code: string, reason: string) =>
  new EngineError('CHAIN_BROKEN', `the decision chain is broken at link ${brokenAt}: ${reason}`, {
    data: { brokenAt, chainCode: code },
  });

/**
 * Owner decisions and delegations: each appends a signed link to the subject's hash chain, after
 * the chain verifies (incrementally: see trust-verifier.ts). A proposal goes live only when its
 * link verifies under the subject's owner key; a broken chain stops every promotion.
 */
export class OwnerDecisions {
  constructor(
    private readonly client: SqlClient,
    private readonly crypto: ChainCrypto,
    private readonly clock: () => Date,
    private readonly trust: TrustVerifier,
  ) {}

  /**
   * The full check, from the first link: every link, every decided proposal's content, every
   * status out of the pile, every slot delegation, and the heads recorded outside the tables.
   */
  async verify(
    subjectId: string,
    db: SqlExecutor = this.client,
    signedHead?: SignedHead,
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
      crypto: this.crypto,
      publicKeyPem: subject.ownerPublicKey ?? '',
      keyId: subject.ownerKeyId ?? '',
    };
    const trustSql = new TrustSql(db);
    const decidedIds = [
      ...new Set(links.filter((l) => decidesProposal(l)).map((l) => l.proposalId)),
    ];
    const facts = new Map((await trustSql.facts(subjectId, decidedIds)).map((f) => [f.id, f]));
    const report = verifyChain(links, {
      ...opts,
      currentContentHash: (id) => {
        const f = facts.get(id);
        return f === undefined ? null : factContentHash(f, this.crypto);
      },
    });
    if (!report.ok) return report;
    const state = new ChainState(subjectId, opts);
    state.extend(links, (id) => facts.get(id) ?? null, this.crypto);
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
    const activeIds = new Set(active.map((e) => e.fact.id));
    const departed = [
      ...(await trustSql.departed(
        subjectId,
        state.chainLive().filter((id) => !activeIds.has(id)),
      )),
      ...(await trustSql.unsignedDeparted(subjectId)).filter((u) =>
        wasBacked(state, u, subjectId, this.crypto),
      ),
    ];
    const judged = judgeFacts(state, active, departed, this.clock(), this.crypto);
    const w = judged.withheld[0];
    if (w !== undefined) {
      const seq = state.decided.get(w.fact.id)?.seq ?? length + 1;
      return broken(seq, w.code, `fact ${w.fact.id}: ${w.reason}`);
    }
    const u = judged.unexplained[0];
    if (u !== undefined) {
      return broken(
        state.approved.get(u.id)?.seq ?? length + 1,
        u.code,
        `fact ${u.id}: ${u.reason}`,
      );
    }
    return (await this.auditStatuses(subjectId, links, state, new FactSql(db))) ?? report;
  }

  /**
   * Facts out of the pile that are not live: each must agree with its last decision (approve:
   * superseded, retracted or expired; reject: rejected), or have no decision for a reason the
   * store can show: an action promoted on a receipt in a delegated slot, or a restoration.
   */
  private async auditStatuses(
    subjectId: string,
    links: readonly DecisionLink[],
    state: ChainState,
    facts: FactSql,
  ): Promise<ChainReport | null> {
    const last = new Map(links.filter((l) => decidesProposal(l)).map((l) => [l.proposalId, l]));
    const rows = await facts.decisionAudit(subjectId);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const delegated = (slot: string, tool: string | null, at: Date) => {
      const d = state.delegationAt(slot, at);
      return d !== undefined && d.autoLive && tool !== null && d.tools.includes(tool);
    };
    const justified = (id: string, depth: number): boolean => {
      const row = byId.get(id);
      if (row === undefined || depth > 32) return false;
      const link = last.get(id);
      if (link !== undefined) return link.decision === 'approve';
      if (row.receiptOk && delegated(row.slot, row.tool, row.recordedAt)) return true;
      return row.restoredOriginal !== null && justified(row.restoredOriginal, depth + 1);
    };
    for (const row of rows) {
      const link = last.get(row.id);
      if (link !== undefined) {
        const ok =
          link.decision === 'approve'
            ? ['active', 'superseded', 'retracted', 'expired'].includes(row.status)
            : row.status === 'rejected';
        if (!ok) {
          return {
            ok: false,
            length: links.length,
            brokenAt: link.seq,
            code: 'STATUS_MISMATCH',
            reason: `fact ${row.id} is ${row.status}, but its decision (link ${link.seq}) was ${link.decision}`,
          };
        }
      } else if (!justified(row.id, 0)) {
        return {
          ok: false,
          length: links.length,
          brokenAt: links.length + 1,
          code: 'MISSING_DECISION',
          reason: `fact ${row.id} is ${row.status} with no decision in the chain and no receipt or restoration that explains it`,
        };
      }
    }
    return null;
  }

  /** The subject's key, the signer's agreement with it, and the chain as it stands (held). */
  private async ready(
    tx: SqlExecutor,
    held: HeldTrust,
    subjectId: string,
    signer: OwnerSigner,
  ): Promise<ChainState> {
    await lockChain(tx, subjectId);
    const subject = await new SubjectSql(tx).get(subjectId);
    if (subject?.ownerKeyId == null || subject.ownerPublicKey === null) {
      throw new EngineError(
        'NO_OWNER_KEY',
        `subject "${subjectId}" has no owner key to verify decisions with; store one first`,
      );
    }
    // A write checks the whole chain (signatures verified once per process are remembered): an
    // edit of a link verified earlier is found here, not only by a new process.
    const full = await this.verify(subjectId, tx);
    if (!full.ok) throw chainBroken(full.brokenAt, full.code, full.reason);
    const state = await held.chain(tx);
    if (state.broken !== null) {
      throw chainBroken(state.broken.brokenAt, state.broken.code, state.broken.reason);
    }
    // a head recorded outside the tables (the owner's anchor, this process, an arrival) that the
    // chain no longer holds: a decision now would take the cut link's place and hide the cut
    const cut = (await held.view(tx)).chain.headCut;
    if (cut !== null) {
      throw chainBroken(Math.min(cut.expected.seq, state.length + 1), 'HEAD_CUT', cut.reason);
    }
    if (signer.keyId !== subject.ownerKeyId || signer.publicKeyPem !== subject.ownerPublicKey) {
      throw new EngineError(
        'WRONG_KEY',
        `this key (${signer.keyId}) is not the owner key of "${subjectId}" (${subject.ownerKeyId})`,
        { data: { keyId: signer.keyId, ownerKeyId: subject.ownerKeyId } },
      );
    }
    return state;
  }

  /** Seals the next link, checks it against the verified tip, and appends it. */
  private async append(
    tx: SqlExecutor,
    state: ChainState,
    subjectId: string,
    input: Omit<Parameters<typeof nextLinkFields>[1], 'subjectId' | 'decidedAt' | 'keyId'>,
    signer: OwnerSigner,
    at: Date,
  ): Promise<DecisionLink> {
    const fields = nextLinkFields(
      state.length === 0 ? null : { subjectId, seq: state.tip.seq, hash: state.tip.hash },
      { ...input, subjectId, decidedAt: at.toISOString(), keyId: signer.keyId },
    );
    const link = sealLink(fields, this.crypto, signer);
    // The link must verify in place before anything goes live.
    const check = checkLink(
      link,
      state.tip,
      { crypto: this.crypto, publicKeyPem: signer.publicKeyPem, keyId: signer.keyId },
      state.decidedSeqs,
    );
    if (check !== null) {
      throw new EngineError('CHAIN_BROKEN', `the new decision does not verify: ${check.reason}`, {
        data: { brokenAt: link.seq, chainCode: check.code },
      });
    }
    await new DecisionSql(tx).append(link);
    return link;
  }

  async decide(input: DecideInput): Promise<DecideResult> {
    const { subjectId } = input;
    if ((await new FactSql(this.client).get(subjectId, input.proposalId)) === null)
      throw new EngineError('PROPOSAL_NOT_FOUND', `no proposal "${input.proposalId}"`);
    return this.trust.withSubject(subjectId, async (held) => {
      const result: DecideResult = await this.client.transaction(async (tx) => {
        const state = await this.ready(tx, held, subjectId, input.signer);
        const facts = new FactSql(tx);
        const fact = await facts.get(subjectId, input.proposalId);
        if (fact === null || fact.status !== 'proposed') {
          throw new EngineError(
            'NOT_PENDING',
            `proposal "${input.proposalId}" is ${fact?.status ?? 'gone'}, not pending`,
          );
        }
        if (input.decision === 'approve' && fact.key !== null && input.supersede !== true) {
          const newer = (await held.view(tx)).live.find(
            (f) =>
              f.slot === fact.slot &&
              f.key === fact.key &&
              f.recordedAt.getTime() > fact.recordedAt.getTime(),
          );
          if (newer !== undefined) {
            throw new EngineError(
              'NEWER_VALUE_LIVE',
              `a newer value for ${fact.slot}/${fact.key} is live (${newer.id}, proposed ${newer.recordedAt.toISOString()}); approving this older one would replace it: decide again with supersede to mean that`,
              { data: { liveFactId: newer.id } },
            );
          }
        }
        const at = this.clock();
        const link = await this.append(
          tx,
          state,
          subjectId,
          {
            proposalId: fact.id,
            contentHash: factContentHash(fact, this.crypto),
            decision: input.decision,
            note: input.note ?? '',
          },
          input.signer,
          at,
        );
        const when = new Date(link.decidedAt);
        let superseded: string | null = null;
        if (input.decision === 'approve')
          superseded = (await facts.promote(subjectId, fact.id, when, 'owner')).superseded;
        else await facts.setStatus(subjectId, fact.id, 'rejected', when);
        return {
          proposalId: fact.id,
          decision: input.decision,
          status: input.decision === 'approve' ? 'active' : 'rejected',
          seq: link.seq,
          hash: link.hash,
          root: state.rootHash ?? link.hash,
          superseded,
        };
      });
      // this process now knows the new head: a later cut of it is found here
      await held.chain(this.client);
      return result;
    });
  }

  /**
   * Revokes a token with a signed link: the token's id and secret hash, which every
   * authentication checks against the verified chain (an un-revoked row is still revoked). Also
   * marks the row, in the same transaction, for listings.
   */
  async revokeToken(input: {
    subjectId: string;
    tokenId: string;
    tokenHash: string;
    signer: OwnerSigner;
  }): Promise<{ seq: number; hash: string; root: string; revokedAt: Date }> {
    const { subjectId } = input;
    return this.trust.withSubject(subjectId, async (held) => {
      const result = await this.client.transaction(async (tx) => {
        const state = await this.ready(tx, held, subjectId, input.signer);
        const at = this.clock();
        const link = await this.append(
          tx,
          state,
          subjectId,
          {
            proposalId: revocationTarget(input.tokenId),
            contentHash: this.crypto.sha256Hex(
              tokenRevocationPayload({
                subjectId,
                tokenId: input.tokenId,
                tokenHash: input.tokenHash,
              }),
            ),
            decision: 'revoke',
            note: '',
          },
          input.signer,
          at,
        );
        await new TokenSql(tx).revoke(input.tokenId, at);
        return { seq: link.seq, hash: link.hash, root: state.rootHash ?? link.hash, revokedAt: at };
      });
      await held.chain(this.client);
      return result;
    });
  }

  /** Signs which tools' receipts may make a did fact of an action slot live with no decision. */
  async delegate(input: DelegateInput): Promise<DelegateResult> {
    const { subjectId } = input;
    const tools = [...new Set(input.tools)].sort();
    return this.trust.withSubject(subjectId, async (held) => {
      const result = await this.client.transaction(async (tx) => {
        const state = await this.ready(tx, held, subjectId, input.signer);
        const slot = (await new SlotSql(tx).list(subjectId)).find((s) => s.name === input.slot);
        if (slot === undefined) {
          throw new EngineError('SLOT_NOT_FOUND', `slot "${input.slot}" is not declared`);
        }
        if (slot.rule !== 'action') {
          throw new EngineError(
            'INVALID_ARGUMENT',
            `only action slots can be delegated, and "${input.slot}" is ${slot.rule}`,
            { data: { field: 'slot' } },
          );
        }
        const note = delegationNote(input.autoLive, tools, input.bound);
        const link = await this.append(
          tx,
          state,
          subjectId,
          {
            proposalId: delegationTarget(input.slot),
            contentHash: this.crypto.sha256Hex(
              delegationPayload({
                subjectId,
                slot: input.slot,
                autoLive: input.autoLive,
                tools,
                bound: input.bound,
              }),
            ),
            decision: 'delegate',
            note,
          },
          input.signer,
          this.clock(),
        );
        await new SlotSql(tx).delegate(subjectId, input.slot, input.autoLive, tools);
        return {
          slot: input.slot,
          autoLive: input.autoLive,
          tools,
          bound: input.bound,
          seq: link.seq,
          hash: link.hash,
          root: state.rootHash ?? link.hash,
        };
      });
      await held.chain(this.client);
      return result;
    });
  }
}
