import { EngineError } from '../../src/domain/errors.js';
import type { FactId } from '../../src/domain/ids.js';
import { defineCommand } from '../command.js';
import { recordSignedHead } from '../head-file.js';
import { KEY_OPTIONS, ownerSigner } from '../owner-key-options.js';
import { SUBJECT_OPTION } from '../options.js';

/** `remember`: the owner states a fact in their own words, recorded, checked and signed. */
export const rememberCommand = defineCommand({
  path: ['remember'],
  summary:
    "States a fact in the owner's own words: recorded as the owner's turn, checked by the gate, approved with the owner key.",
  positionals: ['<text>'],
  options: {
    ...SUBJECT_OPTION,
    ...KEY_OPTIONS,
    session: { kind: 'text', value: 'S', help: 'record it in this session (default: a new one)' },
    slot: { kind: 'text', value: 'N', help: 'the slot (default what_i_know_about_user)' },
    'fact-key': {
      kind: 'text',
      value: 'K',
      help: 'its key in the slot (it replaces the live value with that key)',
    },
    corrects: {
      kind: 'text',
      value: 'F',
      help: 'a live fact these words correct: they replace it, in its slot and key (lineage kept)',
    },
  },
  async run(ctx) {
    const text = ctx.positionals.join(' ');
    if (text.trim() === '') {
      throw new EngineError('INVALID_ARGUMENT', 'usage: memledger remember "<text>"');
    }
    const { session, slot } = ctx.values;
    const factKey = ctx.values['fact-key'];
    const corrects = ctx.values.corrects as FactId | undefined;
    const r = await ctx.withSubject(ctx.values.subject, async (me) => {
      const { signer, keyFile } = await ownerSigner(ctx, me);
      const result = await me.owner.remember({
        text,
        signer,
        ...(session === undefined ? {} : { sessionId: session }),
        ...(slot === undefined ? {} : { slot }),
        ...(factKey === undefined ? {} : { key: factKey }),
        ...(corrects === undefined ? {} : { corrects }),
      });
      recordSignedHead(ctx, keyFile, me, result);
      return result;
    });
    const replaced = r.superseded === null ? '' : `; it replaces ${r.superseded}`;
    ctx.print(
      r,
      () =>
        `remembered ${r.proposalId}: now ${r.status} (decision #${r.seq}; turn ${r.turn} of session ${r.sessionId})${replaced}`,
    );
  },
});
