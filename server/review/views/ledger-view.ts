import type { Retraction } from '../../../src/index.js';
import { csrfField, shownTime, type Markup, html } from './layout.js';

function settleForms(r: Retraction, csrf: string): Markup {
  const id = encodeURIComponent(r.id);
  return html`<form method="post" action="/ledger/${id}/settle" class="inline settle">
      ${csrfField(csrf)}
      <label
        >Verdict
        <select name="verdict" required>
          <option value="stands">stands (the pass observation held)</option>
          <option value="overturned">overturned (the overturn condition was seen)</option>
          <option value="unresolvable">unresolvable</option>
        </select></label
      >
      <label>What you observed <input type="text" name="outcome" required size="30" /></label>
      <button type="submit">Settle</button>
    </form>
    ${
      r.probe === null
        ? ''
        : html`<form method="post" action="/ledger/${id}/settle" class="inline settle-probe">
            ${csrfField(csrf)}
            <input type="hidden" name="runProbe" value="1" />
            <button type="submit">Run its probe</button>
          </form>`
    }`;
}

function retractionCard(r: Retraction, due: boolean, csrf: string, timeZone: string): Markup {
  return html`<article class="retraction${due ? ' due' : ''}" id="r-${r.id}">
    <p class="meta">
      ${due ? html`<strong>DUE</strong> · ` : ''}verdict <strong>${r.verdict}</strong> · caught by
      ${r.caughtBy} · corrected ${shownTime(r.correctedAt, timeZone)} · falsifier matures
      ${shownTime(r.dueAt, timeZone)}
    </p>
    <p class="claim"><s>${r.claim}</s> → ${r.correctedClaim}</p>
    <dl class="meta">
      <dt>stood on</dt>
      <dd>${r.stoodOn}</dd>
      <dt>why wrong</dt>
      <dd>${r.whyWrong}</dd>
      <dt>falsifier</dt>
      <dd>${r.procedure}</dd>
      <dt>stands if</dt>
      <dd>${r.passObservation}</dd>
      <dt>overturned if</dt>
      <dd>${r.overturnCondition}</dd>
      ${
        r.probe === null
          ? ''
          : html`<dt>probe</dt>
              <dd>
                <code>${JSON.stringify(r.probe.spec)}</code>: stands if ${r.probe.standsIf},
                overturned if ${r.probe.overturnsIf}
              </dd>`
      }
      ${
        r.settledAt === null
          ? ''
          : html`<dt>settled</dt>
              <dd>
                ${shownTime(r.settledAt, timeZone)} by ${r.settledBy ?? '?'}:
                ${r.settledOutcome ?? ''}
              </dd>`
      }
    </dl>
    ${due ? settleForms(r, csrf) : ''}
  </article>`;
}

/** The retraction ledger, due falsifiers first; a due one is settled here by verdict or probe. */
export function ledgerView(input: {
  items: Array<{ retraction: Retraction; due: boolean }>;
  total: number;
  dueCount: number;
  csrf: string;
  timeZone: string;
}): Markup {
  return html`<h2>
      Retraction ledger
      <span class="meta">(${input.total}; ${input.dueCount} due)</span>
    </h2>
    ${
      input.items.length === 0
        ? html`<p>Nothing has been retracted.</p>`
        : input.items.map((i) => retractionCard(i.retraction, i.due, input.csrf, input.timeZone))
    }`;
}
