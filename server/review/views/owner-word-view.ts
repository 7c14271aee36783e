import type { Fact, SlotDeclaration, SubjectHandle } from '../../../src/index.js';
import { unattestedNote } from '../../../src/rules.js';
import { csrfField, html, yesField, type Markup } from './layout.js';

/**
 * The owner's own words on the page: a card's text edited before approving, a fact remembered
 * as the owner says it, a live fact corrected. Each is a textarea and a typed YES; the gate
 * checks the words against the evidence, and nothing is signed when it drops them.
 */

/** What an approval answers, an edited one with what was proposed (`edited`). */
export type EditedDecision = Awaited<ReturnType<SubjectHandle['owner']['decide']>>;

/** The longest text the gate takes for a fact (MAX_PROPOSAL_TEXT_LENGTH). */
export const MAX_FACT_TEXT = 2_000;
/** The longest fact key (INPUT_LIMITS.keyLength). */
export const MAX_FACT_KEY = 256;

/** A textarea for the owner's words, prefilled (never a newline before them: HTML eats one). */
function wordsField(label: string, text: string): Markup {
  return html`<label class="words"
    >${label}
    <textarea name="text" rows="3" maxlength="${MAX_FACT_TEXT}" required>${text}</textarea>
  </label>`;
}

/**
 * A pending card's "Edit and approve": the proposal's text to change, and YES. A plain post that
 * htmx makes partial, as the card's approve form is (the card is swapped for its outcome).
 */
export function editForm(fact: Fact, csrf: string, day: string, extra: Markup | string): Markup {
  const id = encodeURIComponent(fact.id);
  return html`<details class="edit">
    <summary>Edit and approve</summary>
    <form
      method="post"
      action="/pile/${id}/edit"
      class="edit"
      hx-post="/pile/${id}/edit"
      hx-target="closest article"
      hx-swap="outerHTML"
      hx-include="#night-${day} input[name=ids], #night-${day} input[name=day]"
    >
      ${csrfField(csrf)}
      ${wordsField('Approve these words instead (the gate checks them against the same evidence)', fact.text)}
      ${extra} ${yesField('approve your words', `approve your edit of: ${fact.text.slice(0, 80)}`)}
      <button type="submit" class="approve-edit">Approve my words</button>
    </form>
  </details>`;
}

/** The gate's verdict on a fact's words, in one line: its warning, or `attested (…)`. */
export function verdictLine(fact: Fact): string {
  const note = unattestedNote(fact);
  if (note !== null) return note;
  const a = fact.attestation;
  return a === undefined || a === null
    ? 'attested (no quote verdict: a receipt or a summary)'
    : `attested (${a.verdict}): ${a.reason}`;
}

/**
 * What an edited card becomes: what the agent proposed, what the owner approved, and the gate's
 * verdict on the owner's words, read from the stored fact.
 */
export function editedCard(original: Fact, approved: Fact, outcome: string): Markup {
  return html`<article
    class="proposal decided edited"
    id="p-${original.id}"
    data-proposal="${original.id}"
  >
    <p class="meta">
      ${original.key === null ? original.slot : `${original.slot} (key ${original.key})`}
    </p>
    <dl class="edit-outcome">
      <dt>proposed</dt>
      <dd class="proposed">${original.text}</dd>
      <dt>approved</dt>
      <dd class="approved">${approved.text}</dd>
      <dt>the gate, on the approved words</dt>
      <dd class="verdict">${verdictLine(approved)}</dd>
    </dl>
    <p class="flash ok" role="status">${outcome}</p>
  </article>`;
}

/** The outcome of an approval, said once for the card and the flash. */
export function editOutcome(result: EditedDecision, original: Fact, approved: Fact): string {
  const replaced = result.superseded === null ? '' : `; it replaced fact ${result.superseded}`;
  if (result.edited === undefined) {
    return `approved: now ${result.status} (decision #${result.seq}, signed)${replaced}`;
  }
  return `approved your words: now ${result.status} (decision #${result.seq}, signed), in place of the proposed “${original.text.slice(0, 200)}”, which was rejected${replaced}; the gate reads your words: ${verdictLine(approved)}`;
}

/** /memory's form for a fact in the owner's own words: signed and live in one step. */
export function rememberForm(slots: readonly SlotDeclaration[], csrf: string): Markup {
  return html`<section class="card remember" aria-label="remember in your own words">
    <h3>Remember, in your own words</h3>
    <form method="post" action="/memory/remember" class="remember">
      ${csrfField(csrf)} ${wordsField('What to remember', '')}
      <label
        >Fact key (optional: a later value of the same key replaces this one)
        <input type="text" name="key" maxlength="${MAX_FACT_KEY}" autocomplete="off"
      /></label>
      <label
        >Slot
        <select name="slot">
          <option value="">the default (what_i_know_about_user)</option>
          ${slots.map((s) => html`<option value="${s.name}">${s.name}</option>`)}
        </select></label
      >
      ${yesField('remember it', 'remember it: signed, and live memory at once')}
      <button type="submit" class="remember">Remember (signed)</button>
    </form>
    <p class="meta">
      Your words are recorded as a turn of yours, checked by the gate as any proposal, and approved
      with one signed decision.
    </p>
  </section>`;
}

/** A live fact's two actions: Forget (a dry run first) and Correct (your words replace it). */
export function factActions(fact: Fact, csrf: string): Markup {
  const forget = `/forget?${new URLSearchParams({ kind: 'fact', fact: fact.id }).toString()}`;
  return html`<div class="fact-actions">
    <a class="forget-fact" href="${forget}">Forget…</a>
    <details class="correct">
      <summary>Correct</summary>
      <form method="post" action="/memory/${encodeURIComponent(fact.id)}/correct" class="correct">
        ${csrfField(csrf)}
        ${wordsField('The right words (they replace this fact, signed)', fact.text)}
        ${yesField('correct it', `correct: ${fact.text.slice(0, 80)}`)}
        <button type="submit" class="correct">Correct (signed)</button>
      </form>
    </details>
  </div>`;
}
