import { EngineError } from '../domain/errors.js';
import {
  NO_FORGET_POLICY,
  requestWithinPolicy,
  retentionCutoff,
  signedTargets,
  type ForgetPolicy,
} from '../domain/forget-policy.js';
import {
  forgetNote,
  parseForgetNote,
  planCounts,
  planIsEmpty,
  readForgetScope,
  type ForgetPlan,
  type PlanScope,
} from '../domain/forget.js';
import type { ChainState } from '../domain/chain-state.js';
import type { ChainCrypto } from '../domain/decision-chain.js';
import { lockChain } from '../store/decision-sql.js';
import { ForgetRequestSql } from '../store/forget-request-sql.js';
import { ForgetSql, scrubAfterForget, type ScrubReport } from '../store/forget-sql.js';
import type { SqlClient, SqlExecutor } from '../store/sql-client.js';
import type { Trust } from '../trust/trust-types.js';

/**
 * Forgetting under the owner's signed policy (docs/TRUST.md, "Forgetting under a policy"): a
 * request the user's own words make, honoured at once, and the retention rule a scheduler applies.
 * Neither signs anything: each checks the verified chain for the policy that allows it and removes
 * only what the owner never signed; anything more waits for the owner's signed forget.
 */

/** A forget under the policy: what it removed, the policy link that allowed it, the bytes. */
export interface PolicyForgetResult {
  forgetId: string;
  basis: 'request' | 'retention';
  /** The `policy` link that allowed it. */
  policySeq: number;
  removed: Record<string, number>;
  plan: ForgetPlan;
  forgottenAt: Date;
  scrub: ScrubReport;
}

/** The policy in effect: the last verified `policy` link's, or none. */
export interface PolicyInEffect {
  policy: ForgetPolicy;
  /** The link that signed it; null when there is none. */
  seq: number | null;
  /** The last forgets made under a policy (newest first, at most RECENT_SHOWN). */
  recent: PolicyForgetRecord[];
}

/** One forget made under a policy, as `policy_forgets` records it (ids only). */
export interface PolicyForgetRecord {
  id: string;
  basis: 'request' | 'retention';
  policySeq: number;
  /** The request it honoured (basis `request`). */
  requestId: string | null;
  forgottenAt: Date;
  removed: Record<string, number>;
}

/** How many of the last forgets under a policy `policy()` lists. */
const RECENT_SHOWN = 20;

/** Why a forget under the policy is refused (the plan, when it got that far). */
class Waits extends Error {
  constructor(
    readonly reason: string,
    readonly facts: string[] = [],
  ) {
    super(reason);
  }
}

const policyOf = (chain: ChainState): Omit<PolicyInEffect, 'recent'> =>
  chain.forgetPolicy === null
    ? { policy: NO_FORGET_POLICY, seq: null }
    : {
        policy: {
          honourRequests: chain.forgetPolicy.honourRequests,
          retainDays: chain.forgetPolicy.retainDays,
        },
        seq: chain.forgetPolicy.seq,
      };

export class PolicyForgets {
  constructor(
    private readonly client: SqlClient,
    private readonly trust: Trust,
    private readonly clock: () => Date,
    private readonly newId: () => string,
    private readonly crypto: Pick<ChainCrypto, 'sha256Hex'>,
  ) {}

  /** The forget policy the verified chain holds now (none on a broken chain). */
  async policy(subjectId: string): Promise<PolicyInEffect> {
    const now = await this.trust.withSubject(subjectId, async (held) => {
      const { chain, problem } = await held.check(this.client);
      return problem === null ? policyOf(chain) : { policy: NO_FORGET_POLICY, seq: null };
    });
    const { rows } = await this.client.query<{
      id: string;
      basis: 'request' | 'retention';
      policy_seq: number;
      request_id: string | null;
      note: string;
      forgotten_at: Date;
    }>(
      `SELECT id, basis, policy_seq, request_id, note, forgotten_at FROM policy_forgets
       WHERE subject_id = $1 ORDER BY forgotten_at DESC, id LIMIT $2`,
      [subjectId, RECENT_SHOWN],
    );
    const sha256Hex = (x: string): string => this.crypto.sha256Hex(x);
    const recent = rows.map((r) => {
      const t = parseForgetNote(r.note, sha256Hex(r.note), sha256Hex);
      return {
        id: r.id,
        basis: r.basis,
        policySeq: r.policy_seq,
        requestId: r.request_id,
        forgottenAt: r.forgotten_at,
        removed: t === null ? {} : planCounts(t),
      };
    });
    return { ...now, recent };
  }

  /**
   * Honours a pending request at once when the policy allows it (`requestWithinPolicy`) and it
   * removes nothing the owner signed; otherwise it stays pending, and `waits` says why.
   */
  async honour(
    subjectId: string,
    requestId: string,
  ): Promise<{ done: PolicyForgetResult | null; waits: string | null }> {
    try {
      const done = await this.run(subjectId, 'request', async (tx, policy) => {
        const request = await new ForgetRequestSql(tx).get(subjectId, requestId);
        if (request?.status !== 'pending') throw new Waits('it was answered meanwhile');
        const scope = readForgetScope(request.scope);
        // read against the whole turn the user said it in, not only the quote
        const { rows } = await tx.query<{ content: string }>(
          `SELECT content FROM turns WHERE subject_id = $1 AND session_id = $2 AND seq = $3
             AND role = 'user' AND forget_id IS NULL`,
          [subjectId, request.sessionId, request.turn],
        );
        const said = rows[0]?.content ?? '';
        const why = requestWithinPolicy(policy, { ...request, said, scope });
        if (why !== null) throw new Waits(why);
        return { scope, request: requestId };
      });
      return { done, waits: null };
    } catch (err) {
      if (err instanceof Waits) return { done: null, waits: err.reason };
      throw err;
    }
  }

  /**
   * What the retention rule would forget now (nothing is changed): turns older than its days,
   * except what a fact the owner decided (or that went live) cites. NO_RETENTION_RULE with none.
   */
  async retentionPlan(subjectId: string): Promise<{ plan: ForgetPlan; cutoff: Date }> {
    const { policy } = await this.policy(subjectId);
    if (policy.retainDays === null) throw noRule();
    const cutoff = retentionCutoff(this.clock(), policy.retainDays);
    const plan = await new ForgetSql(this.client).plan(subjectId, {
      kind: 'older',
      before: cutoff,
    });
    return { plan, cutoff };
  }

  /** Applies the retention rule; null when nothing is old enough (a scheduler's quiet run). */
  async applyRetention(subjectId: string): Promise<PolicyForgetResult | null> {
    try {
      return await this.run(subjectId, 'retention', (_tx, policy) => {
        if (policy.retainDays === null) throw noRule();
        return Promise.resolve({
          scope: { kind: 'older', before: retentionCutoff(this.clock(), policy.retainDays) },
        });
      });
    } catch (err) {
      if (err instanceof Waits) {
        throw new EngineError(
          'FORGET_CITED',
          `the retention rule cannot be applied: ${err.reason}`,
        );
      }
      if (err instanceof EngineError && err.code === 'NOTHING_TO_FORGET') return null;
      throw err;
    }
  }

  /**
   * One forget under the policy, in one transaction holding the chain lock (a policy link signed
   * meanwhile waits for it): the verified chain's policy, the plan, the refusal of anything the
   * owner signed, the rows, and a record of it; then the bytes.
   */
  private async run(
    subjectId: string,
    basis: 'request' | 'retention',
    scoped: (
      tx: SqlExecutor,
      policy: ForgetPolicy,
    ) => Promise<{ scope: PlanScope; request?: string }>,
  ): Promise<PolicyForgetResult> {
    const forgetId = this.newId();
    const done = await this.trust.withSubject(subjectId, (held) =>
      this.client.transaction(async (tx) => {
        await lockChain(tx, subjectId);
        const { chain, problem } = await held.check(tx);
        if (problem !== null) {
          const why = `the decision chain is broken at link ${problem.brokenAt}: ${problem.reason}`;
          if (basis === 'request') throw new Waits(why);
          throw new EngineError('CHAIN_BROKEN', `${why}; nothing was forgotten`, {
            data: { brokenAt: problem.brokenAt, chainCode: problem.code },
          });
        }
        const { policy, seq } = policyOf(chain);
        const { scope, request } = await scoped(tx, policy);
        const store = new ForgetSql(tx);
        const plan = await store.plan(subjectId, scope, request).catch((err: unknown) => {
          // a request naming what is not there (any more) waits, as the owner would find it
          if (basis === 'request' && err instanceof EngineError && UNPLANNABLE.has(err.code)) {
            throw new Waits(err.message);
          }
          throw err;
        });
        if (planIsEmpty(plan.targets)) {
          if (basis === 'request') throw new Waits('nothing in the store matches it');
          throw new EngineError('NOTHING_TO_FORGET', 'nothing is old enough to forget');
        }
        const signed = await this.signedIn(tx, subjectId, chain, plan);
        if (signed !== null) throw signed;
        const at = this.clock();
        await store.apply(subjectId, forgetId, plan.targets, at, {
          by: basis,
          requests: plan.requests,
        });
        await tx.query(
          `INSERT INTO policy_forgets (subject_id, id, basis, policy_seq, request_id, note, forgotten_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [subjectId, forgetId, basis, seq, request ?? null, forgetNote(plan.targets), at],
        );
        return { plan, at, seq: seq as number };
      }),
    );
    const scrub = await scrubAfterForget(this.client);
    return {
      forgetId,
      basis,
      policySeq: done.seq,
      removed: planCounts(done.plan.targets),
      plan: done.plan,
      forgottenAt: done.at,
      scrub,
    };
  }

  /** What of a plan the owner signed (or that is live), as the refusal; null: nothing. */
  private async signedIn(
    tx: SqlExecutor,
    subjectId: string,
    chain: ChainState,
    plan: ForgetPlan,
  ): Promise<Waits | null> {
    const { rows } = await tx.query<{ id: string; status: string }>(
      'SELECT id, status FROM facts WHERE subject_id = $1 AND id = ANY($2::text[])',
      [subjectId, plan.targets.facts],
    );
    const found = signedTargets(plan.targets, new Map(rows.map((r) => [r.id, r])), {
      decided: (id) => chain.decided.has(id),
      signedRetraction: (id) => chain.retractions.has(id),
    });
    if (found.facts.length === 0 && found.retractions.length === 0) return null;
    const what = [
      ...found.facts.map((id) => `fact ${id}`),
      ...found.retractions.map((id) => `ledger row ${id}`),
    ];
    return new Waits(
      `it would remove what the owner signed or made live (${what.join(', ')}): that needs the owner's signed forget`,
      found.facts,
    );
  }
}

/** A scope's plan refused for what it names, not for the store's sake. */
const UNPLANNABLE: ReadonlySet<string> = new Set([
  'NOTHING_TO_FORGET',
  'INVALID_ARGUMENT',
  'SESSION_NOT_FOUND',
  'FACT_NOT_FOUND',
]);

const noRule = (): EngineError =>
  new EngineError(
    'NO_RETENTION_RULE',
    'the owner has signed no retention rule (memledger forget policy --retain-days N)',
  );
