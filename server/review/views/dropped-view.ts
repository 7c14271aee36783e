import type { DroppedProposal } from '../../../src/index.js';
import { shownTime, type Markup, html } from './layout.js';

/** Drops of one code on one day. */
export interface DropCount {
  day: string;
  code: string;
  count: number;
}

const PALETTE = [
  '#b03a2e',
  '#2e6fb0',
  '#3f8f3a',
  '#b07d2e',
  '#7a3fb0',
  '#2ea3a3',
  '#b02e7a',
  '#6b6b6b',
];

/** The days from `first` to `last` (YYYY-MM-DD), inclusive. */
function daysBetween(first: string, last: string): string[] {
  const out: string[] = [];
  const end = Date.parse(`${last}T00:00:00Z`);
  for (let t = Date.parse(`${first}T00:00:00Z`); t <= end && out.length < 400; t += 86_400_000) {
    out.push(new Date(t).toISOString().slice(0, 10));
  }
  return out;
}

/**
 * Drops per code per day, as stacked bars: one column a day from `first` to `last`, one colour a
 * code, drawn on the server (no chart library: a few rectangles do not need one).
 */
export function dropChart(counts: DropCount[], first: string, last: string): Markup {
  const days = daysBetween(first, last);
  const codes = [...new Set(counts.map((c) => c.code))].sort();
  const colour = (code: string) => PALETTE[codes.indexOf(code) % PALETTE.length] ?? '#6b6b6b';
  const perDay = new Map<string, DropCount[]>();
  for (const c of counts) perDay.set(c.day, [...(perDay.get(c.day) ?? []), c]);
  const max = Math.max(
    1,
    ...days.map((d) => (perDay.get(d) ?? []).reduce((n, c) => n + c.count, 0)),
  );
  const W = 560;
  const H = 140;
  const left = 28;
  const bottom = 18;
  const bar = (W - left) / Math.max(days.length, 1);
  const scale = (H - bottom - 6) / max;
  const columns = days.map((day, i) => {
    let y = H - bottom;
    const x = left + i * bar + 1;
    const stack = (perDay.get(day) ?? []).map((c) => {
      const h = c.count * scale;
      y -= h;
      return html`<rect
        x="${x.toFixed(1)}"
        y="${y.toFixed(1)}"
        width="${(bar - 2).toFixed(1)}"
        height="${h.toFixed(1)}"
        fill="${colour(c.code)}"
        ><title>${day} ${c.code}: ${c.count}</title></rect
      >`;
    });
    const tick =
      i % Math.ceil(days.length / 7) === 0
        ? html`<text x="${(x + bar / 2).toFixed(1)}" y="${H - 5}" text-anchor="middle">
            ${day.slice(5)}
          </text>`
        : '';
    return html`${stack}${tick}`;
  });
  return html`<figure class="chart">
    <svg
      viewBox="0 0 ${W} ${H}"
      width="100%"
      role="img"
      aria-label="drops per code per day, ${first} to ${last}"
    >
      <line
        x1="${left}"
        y1="${H - bottom}"
        x2="${W}"
        y2="${H - bottom}"
        stroke="currentColor"
        stroke-opacity="0.3"
      />
      <text x="2" y="12">${max}</text>
      <text x="2" y="${H - bottom}">0</text>
      ${columns}
    </svg>
    <figcaption class="meta">
      ${
        codes.length === 0
          ? 'no drops in these days'
          : codes.map(
              (code) =>
                html`<span class="legend"
                  ><svg width="10" height="10" aria-hidden="true">
                    <rect width="10" height="10" fill="${colour(code)}" />
                  </svg>
                  ${code}</span
                > `,
            )
      }
    </figcaption>
  </figure>`;
}

/** The dropped log: the chart, the counts by code, and the drops themselves, newest first. */
export function droppedView(input: {
  counts: DropCount[];
  first: string;
  last: string;
  total: number;
  drops: DroppedProposal[];
  timeZone: string;
}): Markup {
  const byCode = new Map<string, number>();
  for (const c of input.counts) byCode.set(c.code, (byCode.get(c.code) ?? 0) + c.count);
  const codes = [...byCode.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return html`<h2>Dropped at the gate <span class="meta">(${input.total} in all)</span></h2>
    ${dropChart(input.counts, input.first, input.last)}
    <table class="by-code">
      <caption class="meta">
        by code, ${input.first} to ${input.last}
      </caption>
      <thead>
        <tr>
          <th>code</th>
          <th>drops</th>
        </tr>
      </thead>
      <tbody>
        ${codes.map(
          ([code, n]) =>
            html`<tr>
              <td><code>${code}</code></td>
              <td>${n}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    <table class="drops">
      <thead>
        <tr>
          <th>when</th>
          <th>code</th>
          <th>slot</th>
          <th>text</th>
          <th>why</th>
        </tr>
      </thead>
      <tbody>
        ${input.drops.map(
          (d) =>
            html`<tr>
              <td>
                ${shownTime(d.droppedAt, input.timeZone)}<br /><span class="meta"
                  >${d.proposedBy}</span
                >
              </td>
              <td><code>${d.code}</code></td>
              <td>${d.slot}</td>
              <td>${d.text}</td>
              <td>${d.reason}</td>
            </tr>`,
        )}
      </tbody>
    </table>`;
}
