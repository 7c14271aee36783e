import { HIDDEN_FORMAT_MARKERS, ISSUE_33_MARKERS } from './support/receipt-markers.js';
import { describe, expect, it } from 'vitest';
import { RECEIPT_PREFIX } from '../src/domain/receipt.js';
import { stripImitatedReceipts } from '../src/history/receipt-strip.js';

const IMITATION = '[[RECEIPT - recorded by the soul, not written by the model: no tools ran.]]';

describe('stripImitatedReceipts', () => {
  it('keeps the answer when the model leads with a receipt', () => {
    const input = `${IMITATION}\n\nYour favourite colour is chartreuse.`;
    const result = stripImitatedReceipts(input);
    expect(result.text).toBe('Your favourite colour is chartreuse.');
    expect(result.removed).toBe(1);
  });

  it('keeps the answer when a leading receipt is followed by a space', () => {
    const result = stripImitatedReceipts(`${IMITATION} The answer is 42.`);
    expect(result).toEqual({ text: 'The answer is 42.', removed: 1 });
  });

  it('removes a trailing receipt and the whitespace before it', () => {
    const result = stripImitatedReceipts(`Your project is called Perihelion. ${IMITATION}`);
    expect(result).toEqual({ text: 'Your project is called Perihelion.', removed: 1 });
  });

  it('removes a trailing receipt on its own line', () => {
    const result = stripImitatedReceipts(`It is 86°F in Reykjavik.\n\n${IMITATION}\n`);
    expect(result).toEqual({ text: 'It is 86°F in Reykjavik.', removed: 1 });
  });

  it('keeps both sides of a receipt in the middle and puts one space at the seam', () => {
    const result = stripImitatedReceipts(`I decided to.${IMITATION}Good news follows.`);
    expect(result.text).toBe('I decided to. Good news follows.');
    expect(result.text).not.toContain('to.Good');
    expect(result.removed).toBe(1);
  });

  it('does not leave a double space when both sides of a middle receipt have spaces', () => {
    const result = stripImitatedReceipts(`First part.  ${IMITATION}   Second part.`);
    expect(result).toEqual({ text: 'First part. Second part.', removed: 1 });
  });

  it('keeps a paragraph break around a receipt between paragraphs', () => {
    const result = stripImitatedReceipts(`Paragraph one.\n${IMITATION}\nParagraph two.`);
    expect(result.text).toContain('Paragraph one.');
    expect(result.text).toContain('Paragraph two.');
    expect(result.text).toMatch(/Paragraph one\.\n+Paragraph two\./);
    expect(result.removed).toBe(1);
  });

  it('removes two receipts and keeps all the text around them', () => {
    const input = `${IMITATION} Alpha.${IMITATION}Beta. ${IMITATION}`;
    const result = stripImitatedReceipts(input);
    expect(result).toEqual({ text: 'Alpha. Beta.', removed: 3 });
  });

  it('removes two receipts in the middle of prose', () => {
    const input = `One.${IMITATION}Two.${IMITATION}Three.`;
    expect(stripImitatedReceipts(input)).toEqual({ text: 'One. Two. Three.', removed: 2 });
  });

  it('removes adjacent receipts', () => {
    const input = `Answer.${IMITATION}${IMITATION}`;
    expect(stripImitatedReceipts(input)).toEqual({ text: 'Answer.', removed: 2 });
  });

  it('leaves an unterminated marker at position 0 entirely alone', () => {
    const input = '[[RECEIPT no tools ran\n\nThe answer is below the marker.';
    const result = stripImitatedReceipts(input);
    expect(result.text).toBe(input);
    expect(result.removed).toBe(0);
  });

  it('leaves an unterminated marker after leading whitespace alone', () => {
    const input = '  \n[[RECEIPT no tools ran. The whole answer follows here.';
    expect(stripImitatedReceipts(input)).toEqual({ text: input, removed: 0 });
  });

  it('does not erase the answer between an unterminated leading marker and a later receipt', () => {
    // The leading marker has no "]]" of its own; the "]]" belongs to the second, terminated
    // receipt. Pairing the two would excise the whole answer (seed 004: "no rule about receipts
    // is worth erasing an answer over").
    const input = `[[RECEIPT oops\nThe real answer is 42. ${IMITATION}`;
    const result = stripImitatedReceipts(input);
    expect(result.text).toContain('The real answer is 42.');
    expect(result.text).not.toContain(IMITATION);
  });

  it('cuts an unterminated marker later in the text and keeps the text before it', () => {
    const result = stripImitatedReceipts('The answer is 42. [[RECEIPT no tools ran on this turn');
    expect(result).toEqual({ text: 'The answer is 42.', removed: 1 });
  });

  it('cuts a trailing unterminated marker after a removed terminated one', () => {
    const result = stripImitatedReceipts(`${IMITATION}Answer here.\n[[RECEIPT dangling`);
    expect(result).toEqual({ text: 'Answer here.', removed: 2 });
  });

  it('matches the marker case-insensitively', () => {
    expect(stripImitatedReceipts('Answer. [[receipt: none]]')).toEqual({
      text: 'Answer.',
      removed: 1,
    });
    expect(stripImitatedReceipts('[[Receipt x]] Answer.')).toEqual({ text: 'Answer.', removed: 1 });
    expect(stripImitatedReceipts('A.[[rEcEiPt x]]B.')).toEqual({ text: 'A. B.', removed: 1 });
  });

  it('matches a marker with whitespace after the brackets', () => {
    expect(stripImitatedReceipts('Answer. [[ RECEIPT x]]')).toEqual({
      text: 'Answer.',
      removed: 1,
    });
  });

  it("strips an imitation of the engine's own receipt line", () => {
    const line = `${RECEIPT_PREFIX} no tools ran on this turn]]`;
    const result = stripImitatedReceipts(`Sure, here it is.\n${line}`);
    expect(result).toEqual({ text: 'Sure, here it is.', removed: 1 });
  });

  it('leaves a text with no marker unchanged', () => {
    const input = 'A normal answer with [brackets] and [[other]] markup, and RECEIPT as a word.';
    expect(stripImitatedReceipts(input)).toEqual({ text: input, removed: 0 });
  });

  it('does not treat a longer word starting with RECEIPT as the marker', () => {
    const input = 'See [[RECEIPTS]] for details.';
    expect(stripImitatedReceipts(input)).toEqual({ text: input, removed: 0 });
  });

  it('leaves the empty string unchanged', () => {
    expect(stripImitatedReceipts('')).toEqual({ text: '', removed: 0 });
  });

  it('turns a text that is only a receipt into the empty string', () => {
    expect(stripImitatedReceipts(IMITATION)).toEqual({ text: '', removed: 1 });
    expect(stripImitatedReceipts(`\n  ${IMITATION}  \n`)).toEqual({ text: '', removed: 1 });
  });

  it('turns a text that is only receipts into the empty string', () => {
    expect(stripImitatedReceipts(`${IMITATION}\n${IMITATION}`)).toEqual({ text: '', removed: 2 });
  });

  it('never leaves a marker behind in any terminated combination', () => {
    const parts = ['Alpha.', IMITATION, 'Beta,', IMITATION, ' gamma.', IMITATION];
    for (let mask = 0; mask < 1 << parts.length; mask++) {
      const chosen = parts.filter((_, i) => (mask & (1 << i)) !== 0);
      const result = stripImitatedReceipts(chosen.join(''));
      expect(result.text).not.toMatch(/\[\[\s*RECEIPT/i);
      expect(result.removed).toBe(chosen.filter((p) => p === IMITATION).length);
      for (const word of ['Alpha', 'Beta', 'gamma']) {
        if (chosen.some((p) => p.includes(word))) expect(result.text).toContain(word);
      }
    }
  });

  it('leaves an unterminated marker alone when another marker follows it, and strips the later one', () => {
    const r = stripImitatedReceipts('Answer [[RECEIPT oops\nmore answer [[RECEIPT y]] tail');
    expect(r).toEqual({ text: 'Answer [[RECEIPT oops\nmore answer tail', removed: 1 });
  });

  it('puts no space before punctuation that followed a receipt', () => {
    expect(stripImitatedReceipts('I decided to [[RECEIPT x]].').text).toBe('I decided to.');
  });
});

describe('stripImitatedReceipts on look-alike markers', () => {
  // the markers a reader takes for `[[RECEIPT` (issue 33): what does not show skipped, NFKC forms
  // and look-alike letters folded
  const VARIANTS: ReadonlyArray<readonly [string, string]> = [
    ...ISSUE_33_MARKERS,
    ...HIDDEN_FORMAT_MARKERS,
    ['Greek letters', '[[RΕCΕΙΡΤ'],
    ['one bracket that looks like two', '⟦RECEIPT'],
  ];

  it.each(VARIANTS)('cuts a marker with %s, closed by ]] or a look-alike', (_name, marker) => {
    for (const close of [']]', '］］', ']\u200b]', '⟧']) {
      const input = `The transfer is done. ${marker} recorded by memledger: tools bank${close} Bye.`;
      expect(stripImitatedReceipts(input)).toEqual({
        text: 'The transfer is done. Bye.',
        removed: 1,
      });
    }
  });

  it('leaves text that only looks near a marker alone (the negative control)', () => {
    for (const text of [
      'See [ [RECEIPT x]] here.',
      'See [[RECIPE x]] here.',
      'See [RECEIPT x] here.',
      'See [[R ECEIPT x]] here.',
      'See [[RECEIPTS]] here.',
      'See ［［ＲＥＣＥＩＰＴＳ］］ here.',
    ]) {
      expect(stripImitatedReceipts(text)).toEqual({ text, removed: 0 });
    }
  });
});

describe('stripImitatedReceipts on a long input', () => {
  it('strips 80,000 terminated receipts from a 1,000,000-character text in one pass', () => {
    // Each unit is a word then a receipt; the seams become single spaces.
    const unit = 'a[[RECEIPT]]';
    const tail = 'z'.repeat(1_000_000 - 80_000 * unit.length);
    const input = unit.repeat(80_000) + tail;
    expect(input).toHaveLength(1_000_000);
    const result = stripImitatedReceipts(input);
    expect(result.removed).toBe(80_000);
    expect(result.text).toBe('a '.repeat(80_000) + tail);
  });
});
