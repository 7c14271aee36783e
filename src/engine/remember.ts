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
      const slot = optionalString(input.slot, 'slot') ?? REMEMBER_SLOT;
      const key = optionalString(input.key, 'key');
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
        signer: input.signer,
      });
      return { ...decided, sessionId: session, turn: seq };
    },
  };
}
