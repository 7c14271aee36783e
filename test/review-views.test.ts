// The review page's rendering rules, checked where they live: every view goes through the one
// template tag that shows hidden characters, and that tag escapes and shows them.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FactId, Turn } from '../src/index.js';
import { proposerName } from '../server/review/review-data.js';
import { html, visible } from '../server/review/views/layout.js';
import { proposalCard, type PileItem } from '../server/review/views/pile-view.js';

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

describe('a proposal card', () => {
  const at = new Date('2026-12-01T09:00:00Z');
  const turn = (content: string): Turn => ({
    id: 't-1',
    subjectId: 'owner',
    sessionId: 's-1',
    seq: 1,
    role: 'user',
    content,
    corrective: false,
    receipt: null,
    recordedAt: at,
    speaker: null,
  });
  const item = (content: string, quote: string, proposedBy = 'agent'): PileItem => {
    const cited = turn(content);
    return {
      fact: {
        id: 'f-1' as FactId,
        subjectId: 'owner',
        slot: 'what_i_know_about_user',
        key: null,
        text: 'The user moved to Lund.',
        origin: 'saw',
        status: 'proposed',
        attested: true,
        attestation: { verdict: 'asserted', reason: 'the user states it' },
        evidence: { turnId: 't-1', sessionId: 's-1', seq: 1, quote, tool: null, citations: null },
        supersedesId: null,
        supersededById: null,
        validFrom: null,
        validTo: null,
        recordedAt: at,
        supersededAt: null,
        statusAt: at,
        proposedBy,
        retractionId: null,
        restoredFromId: null,
      },
      citedTurn: cited,
      context: [cited],
      replacesLive: null,
    };
  };
  const shown = (i: PileItem) => proposalCard(i, 'csrf', 'UTC', '2026-12-01').toString();

  it('marks the quote in the whole turn, and says nothing is cut when nothing is', () => {
    const card = shown(
      item('Big news: we moved to Lund last spring, finally.', 'we moved to Lund'),
    );
    expect(card).toContain('<mark>we moved to Lund</mark>');
    expect(card).not.toContain('characters not shown');
  });

  it('on a long turn, says what is cut only at its outer edges (negative control)', () => {
    const before = 'a'.repeat(2_500);
    const after = 'b'.repeat(3_000);
    const card = shown(item(`${before} we moved to Lund ${after}`, 'we moved to Lund'));
    const cuts = [...card.matchAll(/\[… (\d+) characters not shown\]/gu)].map((m) => Number(m[1]));
    // 2,500 + 1 before the quote, 2,000 shown; 3,000 + 1 after it, 2,000 shown
    expect(cuts).toEqual([501, 1001]);
  });

  it("names a token's proposer by the token's name, with its id", () => {
    const names = new Map([['tok-1', 'laptop claude']]);
    expect(proposerName('agent:tok-1', names)).toBe('the agent token “laptop claude” (tok-1)');
    // negative controls: an unnamed or unknown token, and a proposer that is not a token
    expect(proposerName('agent:tok-2', new Map([['tok-2', null]]))).toBe('agent:tok-2');
    expect(proposerName('agent:tok-3', names)).toBe('agent:tok-3');
    expect(proposerName('reflection', names)).toBe('reflection');
    const i = {
      ...item('We moved to Lund.', 'We moved to Lund'),
      proposer: proposerName('agent:tok-1', names),
    };
    expect(shown(i).replace(/\s+/gu, ' ')).toContain(
      'proposed by the agent token “laptop claude” (tok-1)',
    );
  });
});
