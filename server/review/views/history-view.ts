import type { Session, Turn } from '../../../src/index.js';
import { renderReceiptLine } from '../../../src/rules.js';
import { forgottenLine } from '../../../src/domain/turn.js';
import { csrfField, html, shownTime, type Markup } from './layout.js';

/**
 * History on the page: the subject's sessions, newest first, and a session's turns in order,
 * each with the link to forget it (a dry run first); a forgotten turn shows as its tombstone.
 */

/** How much of a long turn the history shows. */
const TURN_WINDOW = 4_000;
/** The longest phrase the page sends to a dry run. */
export const MAX_PHRASE = 1_000;

const forgetHref = (fields: Record<string, string>) =>
  `/forget?${new URLSearchParams(fields).toString()}`;

/** Newer and older links for a list whose length is not counted. */
function moreLinks(path: string, page: number, more: boolean): Markup {
  if (page <= 1 && !more) return html``;
  return html`<nav class="pager" aria-label="pages">
    ${page > 1 ? html`<a href="${path}?page=${page - 1}" rel="prev">← newer</a>` : ''}
    <span>page ${page}</span>
    ${more ? html`<a href="${path}?page=${page + 1}" rel="next">older →</a>` : ''}
  </nav>`;
}

/** The form that asks what holds a phrase (a post: the phrase never goes in an address). */
function phraseForm(csrf: string): Markup {
  return html`<section class="card forget-phrase" aria-label="forget a phrase everywhere">
    <h3>Forget a phrase everywhere</h3>
    <form method="post" action="/forget/plan" class="inline phrase">
      ${csrfField(csrf)}
      <input type="hidden" name="kind" value="phrase" />
      <label
        >Phrase
        <input
          type="text"
          name="phrase"
          minlength="3"
          maxlength="${MAX_PHRASE}"
          autocomplete="off"
          required
      /></label>
      <button type="submit" class="plan-phrase">Show what holds it</button>
    </form>
    <p class="meta">
      A dry run first: every turn, fact and record that holds it (case and spacing ignored), in
      numbers. Nothing is forgotten until you type YES there.
    </p>
  </section>`;
}

/** The owner's download of everything, as an export (a post: it needs the open key). */
function exportForm(csrf: string): Markup {
  return html`<section class="card export" aria-label="download an export">
    <h3>Take everything with you</h3>
    <form method="post" action="/export" class="inline">
      ${csrfField(csrf)}
      <button type="submit" class="download-export">Download an export (.tar)</button>
    </form>
    <p class="meta">
      Every session, turn, fact, decision and record of this subject, as JSON Lines with a manifest
      of their SHA-256 digests; no secret is in it. <code>memledger import</code> reads it into any
      store, after checking every byte and the signed chain.
    </p>
  </section>`;
}

/** The sessions, newest first. */
export function sessionsView(input: {
  sessions: Session[];
  page: number;
  more: boolean;
  csrf: string;
  timeZone: string;
}): Markup {
  const { sessions, timeZone } = input;
  return html`<h2>History</h2>
    ${phraseForm(input.csrf)} ${exportForm(input.csrf)}
    ${
      sessions.length === 0
        ? html`<p>No sessions${input.page > 1 ? ' on this page' : ''}.</p>`
        : html`<table class="sessions">
            <tr>
              <th>session</th>
              <th>turns</th>
              <th>started</th>
              <th></th>
            </tr>
            ${sessions.map(
              (s) =>
                html`<tr data-session="${s.id}">
                  <td>
                    <a href="/history/${encodeURIComponent(s.id)}">${s.title ?? '(untitled)'}</a>
                    <code>${s.id}</code>
                  </td>
                  <td>${s.turnCount}</td>
                  <td>${shownTime(s.createdAt, timeZone)}</td>
                  <td>
                    <a
                      class="forget-session"
                      href="${forgetHref({ kind: 'session', session: s.id })}"
                      >Forget this session…</a
                    >
                  </td>
                </tr>`,
            )}
          </table>`
    }
    ${moreLinks('/history', input.page, input.more)}`;
}

function turnItem(t: Turn, timeZone: string): Markup {
  if (t.forgotten !== undefined) {
    return html`<li class="turn forgotten" id="t-${t.seq}" data-seq="${t.seq}">
      <span class="tombstone">${forgottenLine({ ...t, forgotten: t.forgotten })}</span>
    </li>`;
  }
  const cut = t.content.length > TURN_WINDOW;
  return html`<li class="turn" id="t-${t.seq}" data-seq="${t.seq}">
    <span class="meta"
      >#${t.seq}
      ${t.role}${t.speaker === null ? '' : ` (${t.speaker})`}${t.corrective ? ' (corrective)' : ''}
      · ${shownTime(t.recordedAt, timeZone)}</span
    >
    <span class="said">${t.content.slice(0, TURN_WINDOW)}</span>${
      cut
        ? html`<span class="meta">
            [… ${t.content.length - TURN_WINDOW} characters not shown]</span
          >`
        : ''
    }
    ${t.receipt === null ? '' : html`<span class="meta receipt">${renderReceiptLine(t.receipt)}</span>`}
    <a
      class="forget-turn"
      href="${forgetHref({ kind: 'turn', session: t.sessionId, seq: String(t.seq) })}"
      >Forget this turn…</a
    >
  </li>`;
}

/** One session's turns, in order. */
export function sessionView(input: {
  session: Session;
  turns: Turn[];
  page: number;
  pages: number;
  timeZone: string;
}): Markup {
  const { session: s, timeZone } = input;
  const path = `/history/${encodeURIComponent(s.id)}`;
  return html`<h2>${s.title ?? '(untitled)'} <code>${s.id}</code></h2>
    <p class="meta">
      ${s.turnCount} ${s.turnCount === 1 ? 'turn' : 'turns'} · started
      ${shownTime(s.createdAt, timeZone)} · <a href="/history">every session</a> ·
      <a class="forget-session" href="${forgetHref({ kind: 'session', session: s.id })}"
        >Forget this session…</a
      >
    </p>
    ${
      input.turns.length === 0
        ? html`<p>No turns${input.page > 1 ? ' on this page' : ''}.</p>`
        : html`<ol class="turns history">
            ${input.turns.map((t) => turnItem(t, timeZone))}
          </ol>`
    }
    ${
      input.pages <= 1
        ? ''
        : html`<nav class="pager" aria-label="pages">
            ${input.page > 1 ? html`<a href="${path}?page=${input.page - 1}" rel="prev">← earlier</a>` : ''}
            <span>page ${input.page} of ${input.pages}</span>
            ${input.page < input.pages ? html`<a href="${path}?page=${input.page + 1}" rel="next">later →</a>` : ''}
          </nav>`
    }`;
}
