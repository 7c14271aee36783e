// Fact and retraction ids are branded (src/domain/ids.ts): where one is passed for the other, or a
// plain string for either, the code does not compile. `npm run typecheck` (and CI's types step)
// checks each `@ts-expect-error` below: should the brand go, the directive itself fails.
import { describe, expectTypeOf, it } from 'vitest';
import type { FactId, RetractionId, SubjectHandle } from '../src/index.js';

describe('branded ids', () => {
  it('keeps fact ids, retraction ids and plain strings apart', () => {
    expectTypeOf<FactId>().toMatchTypeOf<string>();
    expectTypeOf<RetractionId>().toMatchTypeOf<string>();
    expectTypeOf<string>().not.toMatchTypeOf<FactId>();
    expectTypeOf<FactId>().not.toMatchTypeOf<RetractionId>();
    expectTypeOf<RetractionId>().not.toMatchTypeOf<FactId>();
  });

  it('refuses a mix-up at every call that takes one', () => {
    // never called: only compiled
    const calls = async (me: SubjectHandle, factId: FactId, retractionId: RetractionId) => {
      await me.facts.get(factId); // control: the right id compiles
      await me.ledger.get(retractionId);
      // @ts-expect-error a retraction id is not a fact id
      await me.facts.get(retractionId);
      // @ts-expect-error a fact id is not a retraction id
      await me.ledger.get(factId);
      // @ts-expect-error a plain string is neither
      await me.facts.get('f-1');
      // @ts-expect-error settling names a retraction, not the fact it took down
      await me.ledger.settle({ retractionId: factId, verdict: 'stands', outcome: 'x' });
      const signer = {} as Parameters<SubjectHandle['owner']['decide']>[0]['signer'];
      // @ts-expect-error a decision names a proposal (a fact), not a retraction
      await me.owner.decide({ proposalId: retractionId, decision: 'approve', signer });
    };
    expectTypeOf(calls).toBeFunction();
  });
});
