// The review page's rendering rules, checked where they live: every view goes through the one
// template tag that shows hidden characters, and that tag escapes and shows them.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { html, visible } from '../server/review/views/layout.js';

const REVIEW = resolve(import.meta.dirname, '../server/review');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sources(join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [join(dir, e.name)]
        : [],
  );
}

describe('the review page views', () => {
  it('use the one template tag: only layout.ts imports hono/html', () => {
    const direct = sources(REVIEW)
      .filter((f) => /from 'hono\/html'/.test(readFileSync(f, 'utf8')))
      .map((f) => f.slice(REVIEW.length + 1));
    expect(direct).toEqual(['views/layout.ts']);
  });

  it('show bidi controls, zero-width characters, Unicode tags and private use as their code points (⟨U+202E⟩)', () => {
    const tag = String.fromCodePoint(0xe0041);
    expect(visible(`a\u202Eb\u200Bc${tag}d\uE000`)).toBe('a⟨U+202E⟩b⟨U+200B⟩c⟨U+E0041⟩d⟨U+E000⟩');
    // the negative control: visible text, right-to-left letters included, is left alone
    expect(visible('Keep answers short (שלום) 👋')).toBe('Keep answers short (שלום) 👋');
  });

  it('escape markup and show hidden characters in every interpolated string, arrays included', () => {
    const out = html`<p>${'<script>x</script>\u202E'}</p>
      ${['<b>', '\u2066']}`
      .toString()
      .replace(/\s+/g, '');
    expect(out).toBe('<p>&lt;script&gt;x&lt;/script&gt;⟨U+202E⟩</p>&lt;b&gt;⟨U+2066⟩');
  });
});
