import { html } from 'hono/html';
import type { Fact, Turn } from '../../../src/index.js';
import { locateQuote } from '../../../src/rules.js';
import { csrfField, shownTime, type Markup } from './layout.js';

/** One proposal as the pile shows it: the claim beside the whole turn it cites, in context. */
export interface PileItem {
  fact: Fact;
  citedTurn: Turn | null;
  /** The cited turn and the turns just before and after it, in order. */
  context: Turn[];
  /** A value for the same slot and key is live: approving this one needs `supersede`. */
  replacesLive: Fact | null;
}

/** The proposals of one night (the day they were proposed on, in the subject's zone). */
export interface PileNight {
  day: string;
  items: PileItem[];
}

const UNATTESTED = 'UNATTESTED: the quoted words are real but do not say this.';

function label(f: Fact): string {
  return f.key === null ? f.slot : `${f.slot} (key ${f.key})`;
}

/** The cited turn with the quote marked; a quote that cannot be placed is shown beneath it. */
function citedText(turn: Turn, quote: string | null): Markup {
  const span = quote === null ? null : locateQuote(turn.content, quote);
  if (span === null) {
    return html`${turn.content}${
      quote === null ? '' : html`<br /><span class="meta">quoted: “${quote}”</span>`
    }`;
  }
  return html`${turn.content.slice(0, span.start)}<mark>${turn.content.slice(span.start, span.end)}</mark>${turn.content.slice(span.end)}`;
}

function evidence(item: PileItem): Markup {
  const { fact, citedTurn } = item;
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
              <span class="meta">#${t.seq} ${t.role}:</span> <span class="said">${t.content}</span>
            </li>`,
      )}
    </ol>
  </figure>`;
}

/** One proposal's card, with its two forms: approve (type YES) and reject. */
export function proposalCard(item: PileItem, csrf: string, timeZone: string): Markup {
  const { fact } = item;
  const id = encodeURIComponent(fact.id);
  return html`<article class="proposal" id="p-${fact.id}" data-proposal="${fact.id}">
    <p class="meta">
      <strong>${label(fact)}</strong> · origin <strong>${fact.origin}</strong> · proposed by
      ${fact.proposedBy} · ${shownTime(fact.recordedAt, timeZone)}
    </p>
    <p class="claim">${fact.text}</p>
    ${fact.attested ? '' : html`<p class="unattested" role="alert">${UNATTESTED}</p>`}
    ${evidence(item)}
    <form
      method="post"
      action="/pile/${id}/approve"
      class="inline approve"
      hx-post="/pile/${id}/approve"
      hx-target="closest article"
      hx-swap="outerHTML"
    >
      ${csrfField(csrf)}
      <label
        >Type YES to approve
        <input
          type="text"
          name="confirm"
          class="confirm"
          autocomplete="off"
          spellcheck="false"
          size="4"
          aria-label="type YES to approve: ${fact.text.slice(0, 80)}"
      /></label>
      ${
        item.replacesLive === null
          ? ''
          : html`<label
              ><input type="checkbox" name="supersede" value="1" /> replaces the live value
              “${item.replacesLive.text}”</label
            >`
      }
      <button type="submit" class="approve">Approve</button>
    </form>
    <form
      method="post"
      action="/pile/${id}/reject"
      class="inline reject"
      hx-post="/pile/${id}/reject"
      hx-target="closest article"
      hx-swap="outerHTML"
    >
      ${csrfField(csrf)}
      <button type="submit" class="reject">Reject</button>
    </form>
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
        <h2>
          Proposed on ${night.day}
          <span class="meta">(${night.items.length} waiting)</span>
        </h2>
        <form method="post" action="/pile/reject-night" class="inline">
          ${csrfField(csrf)}
          <input type="hidden" name="day" value="${night.day}" />
          ${night.items.map((i) => html`<input type="hidden" name="ids" value="${i.fact.id}" />`)}
          <button type="submit" class="reject-night">
            Reject all ${night.items.length} from ${night.day}
          </button>
        </form>
        ${night.items.map((i) => proposalCard(i, csrf, timeZone))}
      </section>`,
  )}`;
}
