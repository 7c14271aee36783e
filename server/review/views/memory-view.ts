import type { Fact, SlotDeclaration } from '../../../src/index.js';
import { unattestedNote } from '../../../src/rules.js';
import { shownTime, type Markup, html } from './layout.js';
import { factActions, rememberForm } from './owner-word-view.js';

/** A live fact with the values it replaced, newest first. */
export interface LiveItem {
  fact: Fact;
  lineage: Fact[];
  /** The proposal whose words the owner edited into this fact, if it was one. */
  editedFrom?: Fact;
}

function passport(f: Fact, timeZone: string): Markup {
  const e = f.evidence;
  const cites =
    e.tool !== null
      ? html`the receipt of <code>${e.tool}</code> on turn #${e.seq ?? '?'}`
      : e.quote !== null
        ? html`turn #${e.seq ?? '?'}: “${e.quote}”`
        : html`no evidence`;
  return html`<dl class="passport meta">
    <dt>origin</dt>
    <dd>${f.origin}</dd>
    <dt>since</dt>
    <dd>${shownTime(f.validFrom ?? f.recordedAt, timeZone)}</dd>
    <dt>evidence</dt>
    <dd>
      ${cites}${f.attested ? '' : html` <strong>(${unattestedNote(f) ?? 'UNATTESTED'})</strong>`}
    </dd>
    <dt>proposed by</dt>
    <dd>${f.proposedBy}, ${shownTime(f.recordedAt, timeZone)}</dd>
    <dt>decided</dt>
    <dd>${shownTime(f.statusAt, timeZone)}</dd>
  </dl>`;
}

/**
 * Live memory, filtered by slot: each fact with its passport, what it superseded, and its
 * Forget and Correct; above them, the form that remembers a fact in the owner's words.
 */
export function memoryView(input: {
  items: LiveItem[];
  total: number;
  slots: SlotDeclaration[];
  slot: string | null;
  timeZone: string;
  csrf: string;
}): Markup {
  const { items, slots, slot, timeZone } = input;
  return html`<h2>Live memory <span class="meta">(${input.total})</span></h2>
    ${rememberForm(slots, input.csrf)}
    <form method="get" action="/memory" class="inline">
      <label
        >Slot
        <select name="slot">
          <option value="">every slot</option>
          ${slots.map(
            (s) =>
              html`<option value="${s.name}" ${s.name === slot ? html`selected` : ''}>
                ${s.name}
              </option>`,
          )}
        </select></label
      >
      <button type="submit">Filter</button>
    </form>
    ${
      items.length === 0
        ? html`<p>No live memory${slot === null ? '' : html` in ${slot}`}.</p>`
        : items.map(
            ({ fact, lineage, editedFrom }) =>
              html`<article class="fact" id="f-${fact.id}">
                <p class="meta">
                  <strong
                    >${fact.key === null ? fact.slot : `${fact.slot} (key ${fact.key})`}</strong
                  >
                </p>
                <p class="claim">${fact.text}</p>
                ${passport(fact, timeZone)} ${factActions(fact, input.csrf)}
                ${
                  lineage.length === 0 && editedFrom === undefined
                    ? ''
                    : html`<ol class="lineage" aria-label="values it replaced">
                        ${
                          editedFrom === undefined
                            ? ''
                            : html`<li class="edited-from">
                                your edit of the words ${editedFrom.proposedBy} proposed:
                                “${editedFrom.text}” (${editedFrom.status}, recorded
                                ${shownTime(editedFrom.recordedAt, timeZone)})
                              </li>`
                        }
                        ${lineage.map(
                          (old) =>
                            html`<li>
                              superseded ${shownTime(old.supersededAt, timeZone)}: “${old.text}”
                              (${old.origin}, recorded ${shownTime(old.recordedAt, timeZone)})
                            </li>`,
                        )}
                      </ol>`
                }
              </article>`,
          )
    }`;
}
