import {
  checkLink,
  correctedFact,
  correctionNote,
  delegationPayload,
  delegationTarget,
  nextLinkFields,
  retractionNote,
  retractionPayload,
  retractionTarget,
  revocationTarget,
  tokenRevocationPayload,
  sealLink,
  type ChainCrypto,
  type Decision,
  type DecisionLink,
  type DelegationBound,
  type LinkSigner,
} from '../domain/decision-chain.js';
import { EngineError } from '../domain/errors.js';
import type { Fact } from '../domain/fact.js';
import { invalidField } from '../domain/input.js';
import {
  FORGET_POLICY_TARGET,
  NO_FORGET_POLICY,
  forgetPolicyNote,
  type ForgetPolicy,
} from '../domain/forget-policy.js';
import {
  forgetNote,
  forgetTarget,
  planCounts,
  planIsEmpty,
  type ForgetPlan,
  type ForgetScope,
} from '../domain/forget.js';
import { ForgetSql, scrubAfterForget, type ScrubReport } from '../store/forget-sql.js';
import type { Retraction } from '../domain/retraction-record.js';
import { delegationNote } from '../domain/trust.js';
import { factContentHash, type ChainState } from '../domain/chain-state.js';
import { DecisionSql, lockChain } from '../store/decision-sql.js';
import { FactSql } from '../store/fact-sql.js';
import { SlotSql } from '../store/slot-sql.js';
import type { SqlClient, SqlExecutor } from '../store/sql-client.js';
import { SubjectSql } from '../store/subject-sql.js';
import { TokenSql } from '../store/token-sql.js';
import type { HeldTrust, Trust } from '../trust/trust-types.js';

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
  /**
   * A live fact this approval corrects: it is superseded by the approved one, lineage kept, and
   * the link's signed note names it (a fact with no key has no other way to be replaced).
   */
  corrects?: string;
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

export interface SignRetractionInput {
  subjectId: string;
  signer: OwnerSigner;
  /**
   * The fact the owner was shown the row takes down: a row that names another one now is
   * refused (RETRACTION_CHANGED), so a row changed after it was read is not signed blind.
   */
  factId?: string;
  /** The ledger row to sign, read (or written) in the decision's transaction. */
  row: (tx: SqlExecutor) => Promise<Retraction>;
}

/** An owner's signed retraction: the row, the fact it took out of live memory, and the link. */
export interface SignedRetraction {
  retractionId: string;
  factId: string;
  seq: number;
  hash: string;
  root: string;
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

export interface ForgetInput {
  subjectId: string;
  scope: ForgetScope;
  /** Forget the live facts that rest on what is forgotten too (else FORGET_CITED names them). */
  withFacts?: boolean;
  /** The forget's id (the link names it; forgotten turns point to it). */
  forgetId: string;
  /** The agent's forget request this honours (it is answered, and its words cleared). */
  request?: string;
  signer: OwnerSigner;
}

/** A signed forget: what it removed, its link, and what was done to the database's files. */
export interface ForgetResult {
  forgetId: string;
  /** How many of each kind it removed. */
  removed: Record<string, number>;
  plan: ForgetPlan;
  seq: number;
  hash: string;
  root: string;
  forgottenAt: Date;
  scrub: ScrubReport;
}

const chainBroken = (brokenAt: number, code: string, reason: string) =>
  new EngineError('CHAIN_BROKEN', `the decision chain is broken at link ${brokenAt}: ${reason}`, {
    data: { brokenAt, chainCode: code },
  });

/**
 * Owner decisions and delegations: each appends a signed link to the subject's hash chain, after
 * the trust view holds (src/trust/). A proposal goes live only when its link verifies under the
 * subject's owner key; a broken chain stops every promotion.
 */
export class OwnerDecisions {
  constructor(
    private readonly client: SqlClient,
    private readonly crypto: ChainCrypto,
    private readonly clock: () => Date,
    private readonly trust: Trust,
  ) {}

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
    // The one check a decision makes, as this transaction sees the store: a link edited since
    // this process verified it is found by its row version, every live fact's backing is judged,
    // and every status out of the pile; no link is verified again (src/trust/chain-audit.ts).
    const { chain: state, problem } = await held.check(tx);
    if (problem !== null) throw chainBroken(problem.brokenAt, problem.code, problem.reason);
    if (signer.keyId !== subject.ownerKeyId || signer.publicKeyPem !== subject.ownerPublicKey) {
      throw new EngineError(
        'WRONG_KEY',
        `this key (${signer.keyId}) is not the owner key of "${subjectId}" (${subject.ownerKeyId})`,
        { data: { keyId: signer.keyId, ownerKeyId: subject.ownerKeyId } },
      );
    }
    // The new link's signature will vouch for every link under it (ChainState.extend), so they
    // must have verified under this signer's key: not under a key the store showed the check
    // and hid from the statement above.
    if (state.length > 0 && state.publicKeyPem !== signer.publicKeyPem) {
      throw chainBroken(
        1,
        'KEY_MISMATCH',
        `the chain was checked under another key than the signer's (${signer.keyId}): the store answered with two owner keys`,
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
        if (input.corrects !== undefined) {
          await correctable(held, tx, fact, input.corrects, input.decision);
        } else if (input.note !== undefined && correctedFact(input.note) !== null) {
          // a note that reads as a correction would take a fact down unseen: say so instead
          throw invalidField('note', 'a note cannot name a fact to correct: use corrects');
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
            note:
              input.corrects === undefined
                ? (input.note ?? '')
                : correctionNote(input.corrects, input.note ?? ''),
          },
          input.signer,
          at,
        );
        const when = new Date(link.decidedAt);
        let superseded: string | null = null;
        if (input.decision === 'approve') {
          const by = await facts.promote(subjectId, fact.id, when, 'owner', input.corrects);
          superseded = by.superseded;
        } else await facts.setStatus(subjectId, fact.id, 'rejected', when);
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
      // the link it wrote, read back (its row version, the fact as signed): this process now
      // knows the new head, so a later cut of it is found, and the link is not checked again
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

  /**
   * Signs a ledger row's retraction of a fact: a `retract` link over the row's words and the fact
   * it names, and the fact out of live memory in the same transaction (or, for a fact a row took
   * down before retractions were signed, the link alone). Without it, a row names a fact the
   * owner approved as disputed and takes nothing down (docs/TRUST.md, "Retractions").
   */
  async retract(input: SignRetractionInput): Promise<SignedRetraction> {
    const { subjectId } = input;
    return this.trust.withSubject(subjectId, async (held) => {
      const result = await this.client.transaction(async (tx) => {
        const state = await this.ready(tx, held, subjectId, input.signer);
        const row = await input.row(tx);
        if (row.factId === null) {
          throw new EngineError(
            'INVALID_ARGUMENT',
            `retraction "${row.id}" names no fact: it takes nothing out of memory, so there is nothing to sign`,
            { data: { field: 'retractionId' } },
          );
        }
        if (input.factId !== undefined && input.factId !== row.factId) {
          throw new EngineError(
            'RETRACTION_CHANGED',
            `retraction "${row.id}" names fact "${row.factId}", not "${input.factId}" as it did when it was shown: nothing was signed`,
            { data: { factId: row.factId } },
          );
        }
        const signed = state.retractions.get(row.id);
        if (signed !== undefined) {
          throw new EngineError(
            'NOT_PENDING',
            `retraction "${row.id}" was signed at link ${signed.seq}`,
          );
        }
        const facts = new FactSql(tx);
        const fact = await facts.get(subjectId, row.factId);
        const takenDown = fact?.status === 'retracted' && fact.retractionId === row.id;
        // an overturned row takes nothing down; one that took its fact down before retractions
        // were signed may still be signed, to explain that departure
        const takesDown = fact?.status === 'active' && row.verdict !== 'overturned';
        if (!takesDown && !takenDown) {
          throw new EngineError(
            row.verdict === 'overturned' ? 'ALREADY_SETTLED' : 'FACT_NOT_LIVE',
            row.verdict === 'overturned'
              ? `retraction "${row.id}" was overturned: there is nothing to take down`
              : `fact "${row.factId}" is ${fact?.status ?? 'gone'}; retraction "${row.id}" can take nothing down`,
          );
        }
        const at = this.clock();
        const link = await this.append(
          tx,
          state,
          subjectId,
          {
            proposalId: retractionTarget(row.id),
            contentHash: this.crypto.sha256Hex(
              retractionPayload({ ...row, factId: row.factId, subjectId }),
            ),
            decision: 'retract',
            note: retractionNote(row.factId),
          },
          input.signer,
          at,
        );
        if (takesDown && !(await facts.retract(subjectId, row.factId, row.id, at))) {
          throw new EngineError(
            'FACT_NOT_LIVE',
            `fact "${row.factId}" stopped being live meanwhile`,
          );
        }
        return {
          retractionId: row.id,
          factId: row.factId,
          seq: link.seq,
          hash: link.hash,
          root: state.rootHash ?? link.hash,
        };
      });
      await held.chain(this.client);
      return result;
    });
  }

  /**
   * Forgets, on a signed `forget` link that names by id everything it removes: turns left as
   * tombstones, every other row deleted, in one transaction; then the bytes, from every file of
   * the tables it touched (`scrubForgotten`). Refused (FORGET_CITED) when it would take down a live
   * fact the scope did not name, unless `withFacts`; NOTHING_TO_FORGET when it finds nothing.
   */
  async forget(input: ForgetInput): Promise<ForgetResult> {
    const { subjectId } = input;
    const result = await this.trust.withSubject(subjectId, async (held) => {
      const done = await this.client.transaction(async (tx) => {
        const state = await this.ready(tx, held, subjectId, input.signer);
        const store = new ForgetSql(tx);
        const plan = await store.plan(subjectId, input.scope, input.request);
        if (input.request !== undefined) {
          // still waiting, as this transaction sees it: a request answered meanwhile is not again
          const { rows } = await tx.query(
            `SELECT 1 FROM forget_requests WHERE subject_id = $1 AND id = $2 AND status = 'pending'`,
            [subjectId, input.request],
          );
          if (rows.length === 0) {
            throw new EngineError(
              'NOT_PENDING',
              `forget request "${input.request}" was answered meanwhile`,
            );
          }
        }
        refuseForget(plan, input.withFacts === true);
        const note = forgetNote(plan.targets);
        const at = this.clock();
        const link = await this.append(
          tx,
          state,
          subjectId,
          {
            proposalId: forgetTarget(input.forgetId),
            contentHash: this.crypto.sha256Hex(note),
            decision: 'forget',
            note,
          },
          input.signer,
          at,
        );
        await store.apply(subjectId, input.forgetId, plan.targets, new Date(link.decidedAt), {
          requests: plan.requests,
        });
        return { plan, link, root: state.rootHash ?? link.hash };
      });
      await held.chain(this.client);
      return done;
    });
    // committed: a failure now leaves dead row versions, not a failed forget (the report says so,
    // and the next forget's rewrite removes them)
    const scrub = await scrubAfterForget(this.client);
    return {
      forgetId: input.forgetId,
      removed: planCounts(result.plan.targets),
      plan: result.plan,
      seq: result.link.seq,
      hash: result.link.hash,
      root: result.root,
      forgottenAt: new Date(result.link.decidedAt),
      scrub,
    };
  }

  /**
   * Signs the subject's forget policy (`policy` link): whether the user's own quoted forget
   * requests are honoured at once, and how many days turns are kept. The last link is in effect.
   */
  async setForgetPolicy(input: {
    subjectId: string;
    /** What changes; what is not given stays as the policy in effect says. */
    policy: Partial<ForgetPolicy>;
    signer: OwnerSigner;
  }): Promise<{ policy: ForgetPolicy; seq: number; hash: string; root: string }> {
    const { subjectId } = input;
    return this.trust.withSubject(subjectId, async (held) => {
      const result = await this.client.transaction(async (tx) => {
        const state = await this.ready(tx, held, subjectId, input.signer);
        // merged under the chain's lock: two changes at once do not lose one
        const now = state.forgetPolicy ?? NO_FORGET_POLICY;
        const policy: ForgetPolicy = {
          honourRequests: input.policy.honourRequests ?? now.honourRequests,
          retainDays:
            input.policy.retainDays === undefined ? now.retainDays : input.policy.retainDays,
        };
        const note = forgetPolicyNote(policy);
        const link = await this.append(
          tx,
          state,
          subjectId,
          {
            proposalId: FORGET_POLICY_TARGET,
            contentHash: this.crypto.sha256Hex(note),
            decision: 'policy',
            note,
          },
          input.signer,
          this.clock(),
        );
        return { policy, seq: link.seq, hash: link.hash, root: state.rootHash ?? link.hash };
      });
      await held.chain(this.client);
      return result;
    });
  }

  /** What a forget of `scope` would remove now (nothing is signed or changed). */
  async forgetPlan(subjectId: string, scope: ForgetScope): Promise<ForgetPlan> {
    return new ForgetSql(this.client).plan(subjectId, scope);
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

/**
 * Refuses a correction that cannot stand: `corrects` must be a fact live now (in the trust view,
 * not only by its column), of the proposal's slot and key, and the decision an approval.
 */
async function correctable(
  held: HeldTrust,
  tx: SqlExecutor,
  fact: Fact,
  corrects: string,
  decision: Decision,
): Promise<void> {
  if (decision !== 'approve') throw invalidField('corrects', 'only an approval corrects a fact');
  const live = (await held.view(tx)).live.find((f) => f.id === corrects);
  if (live === undefined) {
    throw new EngineError(
      'FACT_NOT_LIVE',
      `fact "${corrects}" is not live memory: nothing to correct`,
    );
  }
  if (live.id === fact.id || live.slot !== fact.slot || live.key !== fact.key) {
    throw invalidField(
      'corrects',
      `a correction is a new value for the same slot and key (${live.slot}${live.key === null ? '' : `/${live.key}`})`,
    );
  }
}

/** Why a forget plan may not be signed as it stands, thrown; nothing when it may. */
export function refuseForget(plan: ForgetPlan, withFacts: boolean): void {
  if (planIsEmpty(plan.targets)) {
    throw new EngineError('NOTHING_TO_FORGET', 'nothing in the store matches: nothing was signed');
  }
  if (plan.liveFacts.length > 0 && !withFacts) {
    const ids = plan.liveFacts.map((f) => f.id);
    throw new EngineError(
      'FORGET_CITED',
      `live facts rest on what would be forgotten: ${ids.join(', ')}; forget them too (withFacts, or --with-facts) or forget them first: nothing was signed`,
      { data: { facts: ids } },
    );
  }
}
