import type { Attestation, Fact, Retraction, Turn } from '../../../src/index.js';
import { locateQuote, storedVerdictDiffers, unattestedNote } from '../../../src/rules.js';
import { csrfField, shownTime, yesField, type Markup, html } from './layout.js';
import { editForm } from './owner-word-view.js';

/** One proposal as the pile shows it: the claim beside the whole turn it cites, in context. */
export interface PileItem {
  fact: Fact;
  citedTurn: Turn | null;
  /** The cited turn and the turns just before and after it, in order. */
  context: Turn[];
  /** A value for the same slot and key is live: approving this one needs `supersede`. */
  replacesLive: Fact | null;
  /** The gate's verdict on the stored quote, read again now (GateApi pile). */
  verdictNow?: Attestation | null;
  /** Who proposed it, in words (a token by its name): `proposerName`. */
  proposer?: string;
}

/** The proposals of one night (the day they were proposed on, in the subject's zone). */
export interface PileNight {
  day: string;
  items: PileItem[];
}

/** A stored verdict the gate does not give now: both are shown, the stored one is not trusted. */
function verdictDiffers(item: PileItem): Markup | string {
  const now = item.verdictNow;
  const differs = storedVerdictDiffers(item.fact, now);
  if (differs === null || now === null || now === undefined) return '';
  return html`<p class="unattested verdict-differs" role="alert">
    STORED VERDICT DIFFERS: the row says ${differs.stored}; the gate reads this quote now as
    ${now.verdict}: ${now.reason}
  </p>`;
}

/**
 * The gate's verdict on the quote, beside the claim: a warning when it is not `asserted` (the
 * quote asks, hedges, denies, is someone else's, or does not say it), a quiet line when it is.
 */
function attestationNote(fact: Fact): Markup | string {
  const note = unattestedNote(fact);
  if (note !== null) return html`<p class="unattested" role="alert">${note}</p>`;
  const a = fact.attestation;
  return a === undefined || a === null
    ? ''
    : html`<p class="attested meta">attested (${a.verdict}): ${a.reason}</p>`;
}

function label(f: Fact): string {
  return f.key === null ? f.slot : `${f.slot} (key ${f.key})`;
}

/** How much of a long turn a card shows on each side of the quote (or from the start). */
const WINDOW = 2_000;

/** A long turn cut to its window, saying how much is not shown. */
function windowed(
  text: string,
  from: number,
  to: number,
  cut: { before: boolean; after: boolean } = { before: true, after: true },
): Markup {
  const start = Math.max(0, from);
  const end = Math.min(text.length, to);
  return html`${cut.before && start > 0 ? html`<span class="meta">[… ${start} characters not shown] </span>` : ''}${text.slice(start, end)}${
    cut.after && end < text.length
      ? html`<span class="meta"> [… ${text.length - end} characters not shown]</span>`
      : ''
  }`;
}

/** The cited turn with the quote marked; a quote that cannot be placed is shown beneath it. */
function citedText(turn: Turn, quote: string | null): Markup {
  const content = turn.content;
  // placing a quote folds the turn a character at a time: past this size it is shown unmarked
  const span =
    quote === null || content.length > 20 * WINDOW * 10 ? null : locateQuote(content, quote);
  if (span === null) {
    return html`${windowed(content, 0, 2 * WINDOW)}${
      quote === null ? '' : html`<br /><span class="meta">quoted: “${quote}”</span>`
    }`;
  }
  // the window before the quote is cut only at its start, the one after only at its end: the
  // quote itself sits between them
  return html`${windowed(content, span.start - WINDOW, span.start, { before: true, after: false })}<mark>${content.slice(span.start, span.end)}</mark>${windowed(content, span.end, span.end + WINDOW, { before: false, after: true })}`;
}

/** As much of a cited turn as a summary's check reads: the prompt's cut (MAX_SHOWN_TURN_CHARS). */
const SUMMARY_WINDOW = 6_000;

/** A summary's evidence: every turn it cites, as far as the check read it, each one cited. */
function summaryEvidence(item: PileItem): Markup {
  const cited = item.fact.evidence.citations ?? [];
  const found = new Set(item.context.map((t) => t.id));
  const missing = cited.filter((c) => !found.has(c.turn));
  return html`<figure class="evidence">
    <figcaption class="meta">
      summarizes ${cited.length} user ${cited.length === 1 ? 'turn' : 'turns'}: every word of each
      sentence was found in them, but not who did what to whom; read them
    </figcaption>
    <ol class="turns">
      ${item.context.map(
        (t) =>
          html`<li class="cited">
            <span class="meta">#${t.seq} ${t.role}:</span>
            <span class="said">${windowed(t.content, 0, SUMMARY_WINDOW)}</span>
          </li>`,
      )}
    </ol>
    ${
      missing.length === 0
        ? ''
        : html`<p class="meta">
            cites ${missing.map((c) => `#${c.seq}`).join(' ')}, missing from the store
          </p>`
    }
  </figure>`;
}

function evidence(item: PileItem): Markup {
  const { fact, citedTurn } = item;
  if (fact.evidence.citations !== null && fact.evidence.citations !== undefined) {
    return summaryEvidence(item);
  }
  if (citedTurn === null) {
    return html`<p class="meta">
      cites turn #${fact.evidence.seq ?? '?'}, which is missing from the store
    </p>`;
  }
  const tool = fact.evidence.tool;
  return html`<figure class="evidence">
    <figcaption class="meta">
      ${
        tool === null
          ? html`quotes turn #${citedTurn.seq} (${citedTurn.role}) of session
              <code>${citedTurn.sessionId}</code>`
          : html`cites the receipt of <code>${tool}</code> on turn #${citedTurn.seq}`
      }
    </figcaption>
    <ol class="turns">
      ${item.context.map((t) =>
        t.seq === citedTurn.seq
          ? html`<li class="cited">
              <span class="meta">#${t.seq} ${t.role}:</span>
              <span class="said">${citedText(t, fact.evidence.quote)}</span>
            </li>`
          : html`<li class="context">
              <span class="meta">#${t.seq} ${t.role}:</span>
              <span class="said">${windowed(t.content, 0, WINDOW)}</span>
            </li>`,
      )}
    </ol>
  </figure>`;
}

/**
 * The world time the proposal claims, which a model is shown as the fact's date (and which ends
 * it): the owner signs it, so the card shows it, and says when it is not the cited turn's day.
 */
function worldTime(fact: Fact, timeZone: string): Markup {
  if (fact.validFrom === null && fact.validTo === null) return html``;
  const cited = fact.evidence.seq === null ? null : fact.recordedAt;
  return html`<p class="world-time">
    holds from <strong>${shownTime(fact.validFrom, timeZone)}</strong>${
      fact.validTo === null
        ? ''
        : html` until <strong>${shownTime(fact.validTo, timeZone)}</strong> (then it leaves live
            memory)`
    }${
      fact.validFrom !== null && cited !== null
        ? html` <span class="meta">(a model is shown this date, not the day it was said)</span>`
        : ''
    }
  </p>`;
}

/**
 * What approving does to a live value of the same slot and key: an older one is replaced, said
 * in words; a newer one is replaced only when the box is ticked (else NEWER_VALUE_LIVE).
 */
function replaces(item: PileItem): Markup {
  const live = item.replacesLive;
  if (live === null) return html``;
  if (live.recordedAt.getTime() <= item.fact.recordedAt.getTime()) {
    return html`<span class="meta replaces"
      >approving replaces the live value “${live.text}”</span
    >`;
  }
  return html`<label class="replaces"
    ><input type="checkbox" name="supersede" value="1" /> replace the newer live value
    “${live.text}” with this older one</label
  >`;
}

/** A decision's form: a plain post, made partial by htmx (the card is swapped for its outcome). */
function decisionForm(
  id: string,
  action: 'approve' | 'reject',
  csrf: string,
  inner: Markup,
  day: string,
): Markup {
  return html`<form
    method="post"
    action="/pile/${id}/${action}"
    class="inline ${action}"
    hx-post="/pile/${id}/${action}"
    hx-target="closest article"
    hx-swap="outerHTML"
    hx-include="#night-${day} input[name=ids], #night-${day} input[name=day]"
  >
    ${csrfField(csrf)} ${inner}
  </form>`;
}

/** One proposal's card, with its forms: approve (type YES), edit and approve (type YES), reject. */
export function proposalCard(item: PileItem, csrf: string, timeZone: string, day: string): Markup {
  const { fact } = item;
  const id = encodeURIComponent(fact.id);
  return html`<article class="proposal" id="p-${fact.id}" data-proposal="${fact.id}">
    <p class="meta">
      <strong>${label(fact)}</strong> · origin <strong>${fact.origin}</strong> · proposed by
      ${item.proposer ?? fact.proposedBy} · ${shownTime(fact.recordedAt, timeZone)}
    </p>
    <p class="claim">${fact.text}</p>
    ${attestationNote(fact)} ${verdictDiffers(item)} ${worldTime(fact, timeZone)} ${evidence(item)}
    ${decisionForm(
      id,
      'approve',
      csrf,
      html`${yesField('approve', `approve: ${fact.text.slice(0, 80)}`)} ${replaces(item)}
        <button type="submit" class="approve">Approve</button>`,
      day,
    )}
    ${
      fact.evidence.sessionId === null || fact.evidence.seq === null
        ? ''
        : editForm(fact, csrf, day, replaces(item))
    }
    ${decisionForm(
      id,
      'reject',
      csrf,
      html`<button type="submit" class="reject">Reject</button>`,
      day,
    )}
  </article>`;
}

/** What a decided card becomes after a partial update. */
export function decidedCard(fact: Fact, outcome: string): Markup {
  return html`<article class="proposal decided" id="p-${fact.id}" data-proposal="${fact.id}">
    <p class="meta">${label(fact)}</p>
    <p class="claim">${fact.text}</p>
    <p class="flash ok" role="status">${outcome}</p>
  </article>`;
}

/** The pile, night by night, each night with a form that rejects all of it at once. */
export function pileView(nights: PileNight[], csrf: string, timeZone: string): Markup {
  if (nights.length === 0) {
    return html`<section class="card">
      <h2>The pile is empty</h2>
      <p>Nothing waits for a decision.</p>
    </section>`;
  }
  return html`${nights.map(
    (night) =>
      html`<section class="night" aria-label="proposed on ${night.day}">
        ${nightHead(
          night.day,
          night.items.map((i) => i.fact.id),
          csrf,
        )}
        ${night.items.map((i) => proposalCard(i, csrf, timeZone, night.day))}
      </section>`,
  )}`;
}

/**
 * A night's heading and its reject-all form, over the proposals the page shows of it (`ids`).
 * A card decided in place sends them along, and gets this back with the ones still waiting
 * (`oob`: swapped in by id), so the count and the form never name a decided one; none are added,
 * so reject-all never rejects one the owner has not seen.
 */
export function nightHead(day: string, ids: readonly string[], csrf: string, oob = false): Markup {
  return html`<div class="night-head" id="night-${day}" ${oob ? html`hx-swap-oob="true"` : ''}>
    <h2>
      Proposed on ${day}
      <span class="meta">(${ids.length} waiting)</span>
    </h2>
    ${
      ids.length === 0
        ? ''
        : html`<form method="post" action="/pile/reject-night" class="inline">
            ${csrfField(csrf)}
            <input type="hidden" name="day" value="${day}" />
            ${ids.map((id) => html`<input type="hidden" name="ids" value="${id}" />`)}
            <button type="submit" class="reject-night">Reject all ${ids.length} from ${day}</button>
          </form>`
    }
  </div>`;
}

/**
 * Retractions that wait for the owner: each with the fact it would take out of live memory and a
 * form that signs it (type YES, as approving does). Signing sends the fact the owner was shown, so
 * a row changed since is refused (RETRACTION_CHANGED) and nothing is signed.
 */
export function disputesView(
  items: ReadonlyArray<{ retraction: Retraction; fact: Fact }>,
  csrf: string,
  timeZone: string,
): Markup | string {
  if (items.length === 0) return '';
  return html`<section class="night disputes" aria-label="retractions waiting for your signature">
    <div class="night-head">
      <h2>
        Retractions waiting for your signature
        <span class="meta">(${items.length})</span>
      </h2>
      <p class="meta">
        Each disputes a fact you approved. It stays in live memory, marked disputed, until you sign.
      </p>
    </div>
    ${items.map(({ retraction: r, fact }) => {
      const id = encodeURIComponent(r.id);
      return html`<article class="proposal dispute" data-retraction="${r.id}">
        <p class="meta">
          retraction <code>${r.id}</code> · caught by ${r.caughtBy} ·
          ${shownTime(r.recordedAt, timeZone)}
        </p>
        <p class="claim">“${r.claim}” → now: “${r.correctedClaim}”</p>
        <p class="meta">why it was wrong: ${r.whyWrong} · it stood on: ${r.stoodOn}</p>
        <p>
          Signing takes out of live memory the fact <strong>${label(fact)}</strong>:
          <span class="said">${fact.text}</span>
        </p>
        <form method="post" action="/retractions/${id}/sign" class="inline approve">
          ${csrfField(csrf)}
          <input type="hidden" name="factId" value="${fact.id}" />
          ${yesField('sign', `sign the retraction of: ${fact.text.slice(0, 80)}`)}
          <button type="submit" class="sign-retraction">Sign the retraction</button>
        </form>
      </article>`;
    })}
  </section>`;
}
