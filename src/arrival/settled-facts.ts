import { ATTESTATION_VERDICTS } from '../domain/attestation.js';
import type { SettledSnapshot } from '../domain/settled-snapshot.js';
import { collapseWhitespace, shownInline } from '../domain/shown-text.js';

const MAX_ITEM = 120;

/** A stored string on the block's line: one line, receipt markers defanged, bounded. */
function clip(s: string): string {
  const one = collapseWhitespace(shownInline(s)).trim();
  return one.length <= MAX_ITEM ? one : `${one.slice(0, MAX_ITEM - 1)}…`;
}

function age(hours: number): string {
  if (hours < 1) return 'under an hour';
  if (hours < 48) return `${Math.floor(hours)}h`;
  return `${Math.floor(hours / 24)}d`;
}

/**
 * The settled-facts block (seed 000, getSettledFactsForPrompt): at most about eight lines of
 * ground truth joined in before the first token, so the agent need not remember to look.
 */
export function formatSettledFacts(s: SettledSnapshot): string {
  const c = s.openCommitments;
  const commitments =
    c.total === 0
      ? 'Open commitments: none.'
      : `Open commitments: ${c.total} open; latest ${c.latest.length}: ${c.latest
          .map((x) => `"${clip(x.title)}"${x.due === null ? '' : ` (due ${clip(x.due)})`}`)
          .join('; ')}.`;
  const actions =
    s.confirmedActions.length === 0
      ? 'Confirmed actions, last 48h: none.'
      : `Confirmed actions, last 48h: ${s.confirmedActions
          .map((a) => `${clip(a.tool)} on ${clip(a.surface)} → ${clip(a.target)} (${a.completed})`)
          .join('; ')}.`;
  const retractions =
    s.retractions.length === 0
      ? 'Recent retractions: none.'
      : `Recent retractions (do not re-assert): ${s.retractions
          .map(
            (r) =>
              `"${clip(r.claim)}" → now: "${clip(r.corrected)}"${r.verdict === 'overturned' ? ' [retraction overturned: original restored]' : ''}`,
          )
          .join('; ')}.`;
  const due =
    s.falsifiersDue.count === 0
      ? 'Falsifiers due: none.'
      : `Falsifiers due: ${s.falsifiersDue.count} (oldest due ${s.falsifiersDue.oldestDue ?? '?'}); settle with \`memledger retract settle\`.`;
  const pile =
    s.pile.count === 0
      ? 'Proposals awaiting owner review: none.'
      : `Proposals awaiting owner review: ${s.pile.count} (oldest waiting ${age(s.pile.oldestHours ?? 0)}${pileVerdicts(s.pile.verdicts ?? {})}${differing(s.pile.differing ?? 0)}).`;
  return [
    '[Settled facts & recent ground truth]',
    commitments,
    actions,
    retractions,
    due,
    pile,
  ].join('\n');
}

/** "; 1 stored with a verdict the gate does not give it now (not trusted)" ('' for none). */
function differing(n: number): string {
  return n === 0
    ? ''
    : `; ${n} stored with a verdict the gate does not give ${n === 1 ? 'its quote' : 'their quotes'} now (changed outside the gate: not trusted)`;
}

/** The verdicts the gate gave the waiting proposals' quotes, in the order a reviewer reads them. */
const VERDICT_ORDER = [
  ...ATTESTATION_VERDICTS,
  'attested',
  'unattested',
  'unverifiable',
  'not re-checked yet',
] as const;

/** "; by the gate's verdict: 3 asserted, 1 presupposed" ('' when nothing is counted). */
function pileVerdicts(verdicts: Readonly<Record<string, number>>): string {
  const parts = VERDICT_ORDER.filter((v) => (verdicts[v] ?? 0) > 0).map(
    (v) => `${verdicts[v]} ${v}`,
  );
  return parts.length === 0 ? '' : `; by the gate's verdict on their quotes: ${parts.join(', ')}`;
}
