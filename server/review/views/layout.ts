import { html as honoHtml, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

const INVISIBLE = /[\p{Cf}\p{Co}]/gu;

/**
 * A string as the owner must see it: every character that changes what a reader sees without
 * showing (a bidi override, a zero-width space, a Unicode tag a model reads but a page does not
 * draw) shown as its code point (⟨U+202E⟩), so the page cannot read differently from the text that is signed.
 */
export function visible(s: string): string {
  return s.replace(
    INVISIBLE,
    (c) => `⟨U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}⟩`,
  );
}

function shownValue(v: unknown): unknown {
  if (typeof v === 'string') return visible(v);
  if (Array.isArray(v)) return v.map(shownValue);
  return v;
}

/**
 * The views' one template tag: hono/html's `html` (which escapes every interpolated string) over
 * strings made `visible` first. Every view uses this one, never hono's directly.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): HtmlEscapedString {
  return honoHtml(strings, ...values.map(shownValue)) as HtmlEscapedString;
}

/** What the page renders: text from hono/html's `html`, escaped where it was interpolated. */
export type Markup = HtmlEscapedString | Promise<HtmlEscapedString>;

/** The views a signed-in owner moves between. */
export const VIEWS = [
  { path: '/', label: 'Pile' },
  { path: '/memory', label: 'Live memory' },
  { path: '/history', label: 'History' },
  { path: '/dropped', label: 'Dropped' },
  { path: '/ledger', label: 'Ledger' },
  { path: '/arrivals', label: 'Arrivals' },
  { path: '/chain', label: 'Chain' },
] as const;

export interface PageFrame {
  subject: string;
  /** How many proposals wait; null on the locked page (nothing is read before unlocking). */
  pile: number | null;
  csrf: string;
  unlocked: boolean;
  current: string;
  flash: { kind: 'ok' | 'error'; text: string } | null;
}

/** The page title: the pile count first, so a tab says it without being opened. */
export function pageTitle(subject: string, pile: number | null): string {
  return `${pile === null || pile === 0 ? '' : `(${pile}) `}memledger review: ${subject}`;
}

/** The pile badge; out-of-band after a decision, so the count is never stale. */
export function pileBadge(pile: number | null, oob = false): Markup {
  const n = pile ?? 0;
  return html`<span
    id="pile-badge"
    class="badge${n > 0 ? ' nonempty' : ''}"
    title="proposals waiting"
    aria-label="${n} proposals waiting"
    ${oob ? html`hx-swap-oob="true"` : ''}
    >${n}</span
  >`;
}

/** A form's CSRF field: every form carries it, and a post without it changes nothing. */
export function csrfField(csrf: string): Markup {
  return html`<input type="hidden" name="_csrf" value="${csrf}" />`;
}

/** The field a consequential form needs typed YES in (approving, signing, forgetting). */
export function yesField(verb: string, what: string): Markup {
  return html`<label
    >Type YES to ${verb}
    <input
      type="text"
      name="confirm"
      class="confirm"
      autocomplete="off"
      spellcheck="false"
      size="4"
      aria-label="type YES to ${what}"
  /></label>`;
}

/** The flash message slot; errors of partial updates are swapped into it. */
export function flashBox(flash: PageFrame['flash'], oob = false): Markup {
  return html`<div id="flash" aria-live="polite" ${oob ? html`hx-swap-oob="true"` : ''}>
    ${flash === null ? '' : html`<p class="flash ${flash.kind}" role="status">${flash.text}</p>`}
  </div>`;
}

// htmx: no eval, no inline indicator style (the Content-Security-Policy allows neither), and the
// 4xx answers (a refused decision) are swapped in where they say, so their message is read.
const HTMX_CONFIG = JSON.stringify({
  allowEval: false,
  allowScriptTags: false,
  includeIndicatorStyles: false,
  selfRequestsOnly: true,
  historyCacheSize: 0,
  responseHandling: [
    { code: '204', swap: false },
    { code: '[23]..', swap: true },
    { code: '4..', swap: true, error: false },
    { code: '...', swap: false, error: true },
  ],
});

/**
 * htmx's script tag, outside the page's template: a bundler rewrites a tagged template that holds
 * a closing script tag into a helper call (to escape it), and the bundled command has no helper.
 */
const HTMX_SCRIPT = raw('<script src="/assets/htmx.min.js" defer></' + 'script>');

/** The whole page around a view. */
export function layout(frame: PageFrame, body: Markup): Markup {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="htmx-config" content="${HTMX_CONFIG}" />
        <meta name="referrer" content="same-origin" />
        <title>${pageTitle(frame.subject, frame.pile)}</title>
        <link rel="stylesheet" href="/assets/review.css" />
        ${HTMX_SCRIPT}
      </head>
      <body>
        <header class="top">
          <h1>memledger review: <span class="subject">${frame.subject}</span></h1>
          ${
            frame.unlocked
              ? html`<nav aria-label="views">
                    ${VIEWS.map(
                      (v) =>
                        html`<a
                          href="${v.path}"
                          ${frame.current === v.path ? html`aria-current="page"` : ''}
                          >${v.label}${v.path === '/' ? html` ${pileBadge(frame.pile)}` : ''}</a
                        >`,
                    )}
                  </nav>
                  <form method="post" action="/lock" class="inline">
                    ${csrfField(frame.csrf)}
                    <button type="submit" id="lock">Lock (forget the key)</button>
                  </form>`
              : html`<span class="meta">locked</span>`
          }
        </header>
        <main>${flashBox(frame.flash)} ${body}</main>
      </body>
    </html>`;
}

/** Page links for a list: `?page=N` kept beside the view's other query values. */
export function pager(
  path: string,
  query: Record<string, string>,
  page: number,
  pages: number,
): Markup {
  if (pages <= 1) return html``;
  const link = (n: number) => {
    const q = new URLSearchParams({ ...query, page: String(n) });
    return `${path}?${q.toString()}`;
  };
  return html`<nav class="pager" aria-label="pages">
    ${page > 1 ? html`<a href="${link(page - 1)}" rel="prev">← newer</a>` : ''}
    <span>page ${page} of ${pages}</span>
    ${page < pages ? html`<a href="${link(page + 1)}" rel="next">older →</a>` : ''}
  </nav>`;
}

/** One page of a list, 1-based; a page past the end shows the last. */
export function pageOf<T>(
  items: readonly T[],
  page: number,
  size: number,
): { items: T[]; page: number; pages: number } {
  const pages = Math.max(1, Math.ceil(items.length / size));
  const p = Math.min(Math.max(1, page), pages);
  return { items: items.slice((p - 1) * size, p * size), page: p, pages };
}

/** An instant as the page shows it: `2026-12-01 14:05 UTC`, in the subject's zone. */
export function shownTime(d: Date | null, timeZone: string): string {
  if (d === null) return '—';
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(d);
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')} ${timeZone}`;
}
