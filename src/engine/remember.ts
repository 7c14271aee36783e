import { EngineError } from '../domain/errors.js';
import { invalidField, optionalString } from '../domain/input.js';
import type { FactId } from '../domain/ids.js';
import type { OwnerSigner } from '../crypto/owner-key.js';
import type { DecideResult } from '../gate/owner-decisions.js';
import type { EngineModules } from './modules.js';

/** What `owner.remember` answers: the signed approval, and the turn the words were recorded as. */
export type RememberResult = DecideResult & { sessionId: string; turn: number };

/** The owner's own word, as the owner namespace offers it (composed from three modules). */
export interface OwnerRememberApi {
  /**
   * States a fact in the owner's own words: recorded as a user turn spoken by `owner` (in
   * `sessionId`, or a new session), proposed with that turn as its evidence (the whole text
   * quoted), and approved with one signed link. The gate checks it as any proposal (EDIT_DROPPED
   * with its rule's code when it drops it; the turn stays recorded, nothing is signed); a key that
   * is not the subject's is WRONG_KEY before anything is recorded.
   */
  remember(input: {
    text: string;
    sessionId?: string;
    slot?: string;
    key?: string;
    /**
     * A live fact these words correct: they are proposed in its slot with its key and, approved,
     * supersede it (lineage kept; a fact with no key too). FACT_NOT_FOUND or FACT_NOT_LIVE when
     * there is no such live fact; a slot or key given with it must be the fact's.
     */
    corrects?: FactId;
    signer: OwnerSigner;
  }): Promise<RememberResult>;
}

/** The default slot of the owner's own word. */
export const REMEMBER_SLOT = 'what_i_know_about_user';

export function ownerRemember(modules: EngineModules, id: string): OwnerRememberApi {
  return {
    async remember(input) {
      const text = optionalString(input.text, 'text');
      if (text === undefined || text.trim() === '')
        throw invalidField('text', 'say what to remember');
      const sessionId = optionalString(input.sessionId, 'sessionId');
      const corrects = optionalString(input.corrects, 'corrects') as FactId | undefined;
      const target = corrects === undefined ? null : await correctedTarget(modules, id, corrects);
      const givenSlot = optionalString(input.slot, 'slot');
      const givenKey = optionalString(input.key, 'key');
      if (target !== null && (givenSlot ?? target.slot) !== target.slot) {
        throw invalidField('slot', `a correction stays in the fact's slot (${target.slot})`);
      }
      if (target !== null && givenKey !== undefined && givenKey !== target.key) {
        throw invalidField('key', `a correction keeps the fact's key (${target.key ?? 'none'})`);
      }
      const slot = target?.slot ?? givenSlot ?? REMEMBER_SLOT;
      const key = target === null ? givenKey : (target.key ?? undefined);
      const owner = modules.gate.owner(id);
      const stored = await owner.key();
      if (stored === null)
        throw new EngineError('NO_OWNER_KEY', `subject "${id}" has no owner key`);
      if (input.signer?.keyId !== stored.keyId) {
        throw new EngineError(
          'WRONG_KEY',
          `this key is not the owner key of "${id}" (${stored.keyId})`,
        );
      }
      const session =
        sessionId ??
        (await modules.history.sessions(id).create({ title: "in the owner's words" })).id;
      const added = await modules.history
        .turns(id)
        .add({ sessionId: session, role: 'user', content: text, speaker: 'owner' });
      if (!added.recorded) throw invalidField('text', 'reads as a utility request, not a fact');
      const seq = added.turn.seq;
      const r = await modules.gate.gate(id).propose({
        sessionId: session,
        proposedBy: 'owner',
        proposals: [
          {
            slot,
            ...(key === undefined ? {} : { key }),
            text,
            origin: 'saw',
            evidence: { turn: seq, quote: text },
          },
        ],
      });
      const drop = r.dropped[0];
      if (drop !== undefined) {
        throw new EngineError(
          'EDIT_DROPPED',
          `the gate drops it (${drop.code}): ${drop.reason}; it is recorded as turn ${seq} of session ${session}, and nothing was signed`,
          { data: { dropCode: drop.code, sessionId: session, turn: seq } },
        );
      }
      const proposalId = r.proposed[0]?.id as FactId;
      const decided = await owner.decide({
        proposalId,
        decision: 'approve',
        supersede: true,
        ...(corrects === undefined ? {} : { corrects }),
        signer: input.signer,
      });
      return { ...decided, sessionId: session, turn: seq };
    },
  };
}

/** The fact a correction names, if it is live (the trust view's word, not only its column). */
async function correctedTarget(
  modules: EngineModules,
  id: string,
  factId: FactId,
): Promise<{ slot: string; key: string | null }> {
  const fact = await modules.gate.facts(id).get(factId);
  if (fact.status !== 'active') {
    throw new EngineError(
      'FACT_NOT_LIVE',
      `fact "${factId}" is ${fact.status}: nothing to correct`,
    );
  }
  return { slot: fact.slot, key: fact.key };
}
