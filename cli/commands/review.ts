import type { Fact } from '../../src/index.js';
import { defineCommand } from '../command.js';
import { CliError } from '../errors.js';
import { SUBJECT_OPTION } from '../options.js';
import { recordSignedHead } from '../head-file.js';
import { KEY_OPTIONS, ownerSigner } from '../owner-key-options.js';

/** Shows the quote inside the full cited turn, marked with » «, so the reviewer reads it in context. */
function quoteInContext(turn: string, quote: string | null): string {
  if (quote === null || quote === '') return turn;
  const at = turn.toLowerCase().indexOf(quote.toLowerCase());
  if (at < 0) return turn;
  return `${turn.slice(0, at)}»${turn.slice(at, at + quote.length)}«${turn.slice(at + quote.length)}`;
}

/**
 * Walks the pile at a terminal. Approving needs a typed YES; the decision is signed with the
 * owner key. Refuses to run without a terminal: automation uses `memledger decide`.
 */
export const reviewCommand = defineCommand({
  path: ['review'],
  summary:
    'Walks the pile at a terminal: YES approves, r rejects, Enter skips, q quits (each decision signed).',
  options: { ...SUBJECT_OPTION, ...KEY_OPTIONS },
  notes: ['Needs a person at a terminal; scripts use `memledger decide`.'],
  async run(ctx) {
    if (!ctx.io.isTTY) {
      throw new CliError(
        'NO_TERMINAL',
        'review needs a person at a terminal; use `memledger decide` in scripts',
      );
    }
    await ctx.withSubject(ctx.values.subject, async (me) => {
      const pending = await me.gate.pile();
      if (pending.length === 0) {
        ctx.io.stdout('The pile is empty.\n');
        return;
      }
      const { signer, keyFile } = await ownerSigner(ctx, me);
      let decided = 0;
      for (const [i, { fact, citedTurn }] of pending.entries()) {
        ctx.io.stdout(
          [
            '',
            `(${i + 1}/${pending.length}) proposal ${fact.id}`,
            `  slot:     ${fact.slot}${fact.key === null ? '' : ` (key ${fact.key})`}`,
            `  origin:   ${fact.origin}`,
            `  claims:   ${fact.text}`,
            `  attested: ${attestedLine(fact)}`,
            `  cites:    turn #${fact.evidence.seq ?? '?'} (${citedTurn?.role ?? 'missing'}):`,
            `            ${citedTurn === null ? '(missing)' : quoteInContext(citedTurn.content, fact.evidence.quote)}`,
            '',
          ].join('\n'),
        );
        const answer = (
          await ctx.io.prompt(
            'Approve? Type YES to approve, r to reject, Enter to skip, q to quit: ',
          )
        ).trim();
        if (answer === 'q') break;
        if (answer !== 'YES' && answer !== 'r') continue;
        const result = await me.owner.decide({
          proposalId: fact.id,
          decision: answer === 'YES' ? 'approve' : 'reject',
          signer,
        });
        recordSignedHead(ctx, keyFile, me, result);
        decided += 1;
        ctx.io.stdout(`  → ${result.status} (decision #${result.seq})\n`);
      }
      ctx.io.stdout(`\n${decided} decided, ${pending.length - decided} left in the pile.\n`);
    });
  },
});

/** The review's attested line: yes or NO, with the gate's verdict and its reason. */
function attestedLine(fact: Fact): string {
  const a = fact.attestation;
  if (a === undefined || a === null) {
    return fact.attested
      ? 'yes, the cited turn says this'
      : 'NO: the quote is real, but the turn does not say what this claims';
  }
  return fact.attested ? `yes (${a.verdict}): ${a.reason}` : `NO (${a.verdict}): ${a.reason}`;
}
