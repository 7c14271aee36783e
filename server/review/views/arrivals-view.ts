import type { ArrivalManifest, ManifestDiff } from '../../../src/index.js';
import { shownTime, type Markup, html } from './layout.js';

const list = (xs: readonly string[]) => (xs.length === 0 ? '—' : xs.join(', '));

function diffLines(d: ManifestDiff | null): Markup {
  if (d === null) return html`<p class="meta">diff unavailable</p>`;
  if (d.from === null) return html`<p class="meta">the first arrival on this surface</p>`;
  const tools =
    d.tools.countBefore === null
      ? `${d.tools.countAfter}`
      : `${d.tools.countBefore} → ${d.tools.countAfter}`;
  return html`<dl class="meta diff">
    <dt>against</dt>
    <dd><code>${d.from}</code></dd>
    <dt>blocks changed</dt>
    <dd>${list(d.blocks.changed)}</dd>
    <dt>blocks added</dt>
    <dd>${list(d.blocks.added)}</dd>
    <dt>blocks removed</dt>
    <dd>${list(d.blocks.removed)}</dd>
    <dt>tools</dt>
    <dd>${tools}; added ${list(d.tools.added)}; removed ${list(d.tools.removed)}</dd>
  </dl>`;
}

/** Arrivals, newest first: each manifest and what changed since the previous on its surface. */
export function arrivalsView(input: {
  items: Array<{ manifest: ArrivalManifest; diff: ManifestDiff | null }>;
  total: number;
  surface: string | null;
  timeZone: string;
}): Markup {
  return html`<h2>Arrivals <span class="meta">(${input.total})</span></h2>
    <form method="get" action="/arrivals" class="inline">
      <label>Surface <input type="text" name="surface" value="${input.surface ?? ''}" /></label>
      <button type="submit">Filter</button>
    </form>
    ${
      input.items.length === 0
        ? html`<p>
            No arrival has been assembled${input.surface === null ? '' : ' on this surface'}.
          </p>`
        : input.items.map(
            ({ manifest: m, diff }) =>
              html`<article class="arrival" id="a-${m.id}">
                <p class="meta">
                  <strong>${m.surface}</strong> · ${shownTime(m.createdAt, input.timeZone)} ·
                  ${m.totalChars} chars · ${m.toolCount} tools · chain
                  ${
                    m.chain === null || m.chain === undefined ? 'empty' : `${m.chain.length} links`
                  }${
                    m.degraded.length === 0
                      ? ''
                      : html` · <strong>degraded: ${m.degraded.join(', ')}</strong>`
                  }
                </p>
                <table class="manifest">
                  <thead>
                    <tr>
                      <th>block</th>
                      <th>tier</th>
                      <th>chars</th>
                      <th>sha-256</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${m.blocks.map(
                      (b) =>
                        html`<tr>
                          <td>${b.name}${b.degraded ? ' (fallback)' : ''}</td>
                          <td>${b.tier}</td>
                          <td>${b.chars}</td>
                          <td><code>${b.sha256.slice(0, 16)}…</code></td>
                        </tr>`,
                    )}
                  </tbody>
                </table>
                ${diffLines(diff)}
              </article>`,
          )
    }`;
}
