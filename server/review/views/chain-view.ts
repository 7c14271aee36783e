import type { ChainReport, IntegrityReport } from '../../../src/index.js';
import { html, type Markup } from './layout.js';

/** How the server anchored its check: the key file outside the store, and the signed head. */
export interface ChainState {
  report: ChainReport;
  /** Checked against the key file's public half (not only the store's own copy). */
  anchored: boolean;
  /** One line saying what anchored it, or why nothing did. */
  anchor: string;
  /** The head the owner's decisions recorded beside the key file, if any. */
  signedHead: { seq: number; hash: string } | null;
}

/** The decision chain's state: length, anchor, the broken link if any, and what is withheld. */
export function chainView(state: ChainState, integrity: IntegrityReport): Markup {
  const r = state.report;
  return html`<h2>Decision chain</h2>
    <section class="card" id="chain-state">
      ${
        r.ok
          ? html`<p class="state-ok" id="chain-verdict">chain ok: ${r.length} decisions</p>
              <p class="meta">head <code>${r.headHash}</code></p>`
          : html`<p class="state-bad" id="chain-verdict">
                chain BROKEN at link ${r.brokenAt} (${r.code})
              </p>
              <p>${r.reason}</p>
              <p class="meta">
                ${r.length} links; promotion stops until it is repaired, and every arrival shows an
                integrity block.
              </p>`
      }
      <p class="meta">
        ${state.anchored ? 'anchored' : 'NOT anchored'}:
        ${state.anchor}${
          state.signedHead === null ? '' : html`; signed head: link ${state.signedHead.seq}`
        }
      </p>
    </section>
    <section class="card" id="integrity">
      <h3>Integrity of live memory</h3>
      ${
        integrity.ok
          ? html`<p class="state-ok">every live fact is backed by an owner signature</p>`
          : html`<ul>
              ${integrity.warning.map((w) => html`<li>${w}</li>`)}
            </ul>`
      }
    </section>`;
}
