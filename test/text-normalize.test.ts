import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  ATTESTATION_MIN_OVERLAP,
  ATTESTATION_MIN_RATIO,
  RETRACTED_SIMILARITY_THRESHOLD,
  claimMatcher,
  containsClaim,
  isAttestedBy,
  similarity,
} from '../src/domain/text/compare.js';
import { STOPWORDS, contentTokens, wordForm } from '../src/domain/text/words.js';
import {
  containsWords,
  locateQuote,
  normalizeForQuote,
  quoteFoundIn,
} from '../src/domain/text/fold.js';

describe('normalizeForQuote', () => {
  it('folds typographic quotes, apostrophes and primes to ASCII', () => {
    expect(normalizeForQuote('\u201CDon\u2019t\u201D')).toBe('"don\'t"');
    expect(normalizeForQuote('\u201Eja\u201F \u00ABoui\u00BB \u2018x\u2019 \u201By\u2032')).toBe(
      '"ja" "oui" \'x\' \'y\'',
    );
    expect(normalizeForQuote('6\u2033 tall')).toBe('6" tall');
  });

  it('folds dashes and the minus sign to a hyphen and the ellipsis to three dots', () => {
    expect(normalizeForQuote('Tuesday\u2014not Thursday')).toBe('tuesday-not thursday');
    expect(normalizeForQuote('9\u20135 \u2212 1 \u2010 \u2011 \u2012 \u2015')).toBe(
      '9-5 - 1 - - - -',
    );
    expect(normalizeForQuote('well\u2026')).toBe('well...');
  });

  it('lowercases, applies NFKC and collapses and trims whitespace', () => {
    expect(normalizeForQuote('  Keep\tYOUR\n\nanswers\u00A0 SHORT  ')).toBe(
      'keep your answers short',
    );
    expect(normalizeForQuote('\uFF2B\uFF45\uFF45\uFF50 \uFB01le')).toBe('keep file');
    expect(normalizeForQuote('con\u00ADtract\u200B')).toBe('contract');
  });

  it('is idempotent and changes nothing else', () => {
    const once = normalizeForQuote(
      '\u201CNo,\u201D she said \u2014 \u201Cit\u2019s Tuesday!\u201D',
    );
    expect(normalizeForQuote(once)).toBe(once);
    expect(once).toBe('"no," she said - "it\'s tuesday!"');
    expect(normalizeForQuote('')).toBe('');
    expect(normalizeForQuote(' \n\t ')).toBe('');
  });
});

describe('quoteFoundIn', () => {
  const turn =
    'Remind me what we decided last week about the vendor\u2019s contract \u2014 quickly.';

  it('finds a quote across case, whitespace, quotes and dashes', () => {
    expect(quoteFoundIn("what we decided last week about the vendor's contract", turn)).toBe(true);
    expect(quoteFoundIn('WHAT  WE DECIDED\nlast week', turn)).toBe(true);
    expect(quoteFoundIn("vendor's contract - quickly", turn)).toBe(true);
  });

  it('does not find a misquote, a reordering or a blank quote', () => {
    expect(quoteFoundIn('what we agreed last week', turn)).toBe(false);
    expect(quoteFoundIn('last week we decided', turn)).toBe(false);
    expect(quoteFoundIn('', turn)).toBe(false);
    expect(quoteFoundIn('   ', turn)).toBe(false);
    expect(quoteFoundIn('', '')).toBe(false);
  });

  it('does not find a fragment of a word', () => {
    expect(quoteFoundIn('no', 'I know')).toBe(false);
    expect(quoteFoundIn('contract', 'two contracts')).toBe(false);
    expect(quoteFoundIn('contract', 'the contract.')).toBe(true);
    expect(containsWords('the vendor', 'vendor')).toBe(true);
  });
});

describe('locateQuote', () => {
  it('marks where the quote stands in the turn, typographic characters and all', () => {
    const turn = 'Well — I’m  moving to\nLund, “for good”.';
    const at = locateQuote(turn, "i'm moving to lund");
    expect(at).not.toBeNull();
    expect(turn.slice(at?.start, at?.end)).toBe('I’m  moving to\nLund');
    const quoted = locateQuote(turn, '"for good"');
    expect(turn.slice(quoted?.start, quoted?.end)).toBe('“for good”');
  });

  it('finds nothing the turn does not say, nor a fragment of a word (negative control)', () => {
    expect(locateQuote('I know', 'no')).toBeNull();
    expect(locateQuote('I moved to Lund', 'moved to Malmö')).toBeNull();
    expect(locateQuote('I moved to Lund', '   ')).toBeNull();
  });

  it('gives a span whose folded text is the folded quote, in a composed turn (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 60 }).map((t) => t.normalize('NFC')),
        fc.nat(),
        fc.nat(),
        (turn, a, b) => {
          const chars = [...turn];
          const from = Math.min(a, b) % (chars.length + 1);
          const quote = chars.slice(from, from + (Math.max(a, b) % 20)).join('');
          const at = locateQuote(turn, quote);
          if (at !== null) {
            expect(normalizeForQuote(turn.slice(at.start, at.end))).toBe(normalizeForQuote(quote));
          } else {
            expect(quoteFoundIn(quote, turn)).toBe(false);
          }
        },
      ),
    );
  });
});

describe('contentTokens', () => {
  it('drops stopwords, possessives and contractions, keeps distinct words in order', () => {
    expect(contentTokens("The user's question about the vendor contract")).toEqual([
      'user',
      'question',
      'vendor',
      'contract',
    ]);
    expect(contentTokens("I didn't say it; you're wrong, it's Tuesday")).toEqual(
      ['say', 'wrong', 'tuesday'].map(wordForm),
    );
    expect(contentTokens('contract CONTRACT contracts')).toEqual(['contract']);
    expect(contentTokens('the and of')).toEqual([]);
    expect(contentTokens("O'Brien paid 3 invoices")).toEqual(
      ["o'brien", 'pay', '3', 'invoice'].map(wordForm),
    );
    expect(STOPWORDS.has('the')).toBe(true);
    expect(STOPWORDS.size).toBeGreaterThanOrEqual(150);
  });

  it('stems inflections of one word to the same token', () => {
    const same = (...words: string[]) => new Set(words.map(wordForm)).size;
    expect(same('contract', 'contracts')).toBe(1);
    expect(same('decide', 'decided', 'deciding', 'decides')).toBe(1);
    expect(same('recent', 'recently')).toBe(1);
    expect(same('plan', 'planned', 'planning')).toBe(1);
    expect(same('company', 'companies')).toBe(1);
    expect(same('reply', 'replied', 'replies')).toBe(1);
    expect(same('business', 'businesses')).toBe(1);
    expect(same('meet', 'meeting', 'meetings')).toBe(1);
  });

  it('maps irregular forms to one lemma before stemming', () => {
    const same = (...words: string[]) => new Set(words.map(wordForm)).size;
    expect(same('go', 'went', 'goes', 'going', 'gone')).toBe(1);
    expect(same('say', 'said')).toBe(1);
    expect(same('child', 'kids', 'children')).toBe(1);
    expect(same('sept', 'september')).toBe(1);
    expect(same('two', '2')).toBe(1);
  });

  it('keeps different words apart, however alike they look', () => {
    const distinct = (a: string, b: string) =>
      expect(wordForm(a), `${a} ${b}`).not.toBe(wordForm(b));
    distinct('early', 'ear');
    distinct('thing', 'thin');
    distinct('status', 'state');
    distinct('need', 'ne');
    distinct('went', 'want');
    distinct('left', 'lift');
  });
});

describe('isAttestedBy', () => {
  const turn = 'I signed the vendor contract with Acme on Friday and the renewal is due in March';

  it('exports the thresholds of seed 000', () => {
    expect(ATTESTATION_MIN_OVERLAP).toBe(2);
    expect(ATTESTATION_MIN_RATIO).toBe(0.6);
  });

  it('attests a normalized substring', () => {
    expect(isAttestedBy('The Vendor Contract with ACME', turn)).toBe(true);
  });

  it('attests at 60% or more content-token overlap with at least 2 tokens', () => {
    // signed, contract, acme of signed, contract, acme, lawyer, review: 3 of 5 = 60%
    expect(isAttestedBy('Acme contract signed; lawyer review', turn)).toBe(true);
    // contracts, renewal, budget, march: 3 of 4 = 75%, with "contracts" matching "contract"
    expect(isAttestedBy('Contracts renewal budget for March', turn)).toBe(true);
  });

  it('does not attest a single shared token, even at 100%', () => {
    expect(isAttestedBy('Acme!', turn)).toBe(false);
    expect(isAttestedBy('the Acme people', turn)).toBe(false);
  });

  it('does not attest 50% overlap', () => {
    // vendor, contract of vendor, contract, terminated, lawsuit
    expect(isAttestedBy('Vendor contract terminated after lawsuit', turn)).toBe(false);
  });

  it('does not attest an unrelated or empty text', () => {
    expect(isAttestedBy('The user authorized wire transfers', turn)).toBe(false);
    expect(isAttestedBy('', turn)).toBe(false);
    expect(isAttestedBy('the and of', turn)).toBe(false);
  });
});

describe('similarity', () => {
  it('is 1 for texts equal after normalization', () => {
    expect(similarity('The meeting is on Tuesday', '  the MEETING is on tuesday ')).toBe(1);
    expect(similarity('It\u2019s Tuesday', "it's tuesday")).toBe(1);
  });

  it('is the Dice coefficient over distinct content tokens, and symmetric', () => {
    const a = 'The meeting moved to Tuesday';
    const b = 'The meeting moved to Thursday';
    expect(similarity(a, b)).toBeCloseTo(2 / 3);
    expect(similarity(b, a)).toBeCloseTo(similarity(a, b));
    expect(similarity(a, b)).toBeLessThan(RETRACTED_SIMILARITY_THRESHOLD);
  });

  it('stays above the threshold for the same claim reworded with one word more', () => {
    const claim = 'The user prefers morning calls with the London team';
    const reworded = 'User prefers morning calls with the London team, always';
    expect(similarity(claim, reworded)).toBeGreaterThanOrEqual(RETRACTED_SIMILARITY_THRESHOLD);
  });

  it('is 0 for unrelated or empty texts', () => {
    expect(similarity('vendor contract', 'wire transfers')).toBe(0);
    expect(similarity('', '')).toBe(0);
    expect(similarity('the', 'of')).toBe(0);
  });
});

describe('claimMatcher', () => {
  const claims = [
    'I already sent the invoice to Northwind Logistics',
    'The user lives in Paris',
    'The meeting moved to Tuesday',
  ];
  const match = claimMatcher(claims);

  it('finds the claim a longer text says, as containsClaim does', () => {
    expect(
      match('So, as I said, I already sent the invoice to Northwind Logistics yesterday.'),
    ).toBe(0);
    expect(match('She lives in central Paris and works as a nurse.')).toBe(1);
  });

  it('finds nothing when no claim is said, or the negation differs (negative controls)', () => {
    expect(match('The meeting moved to Thursday and the invoice is unpaid.')).toBe(-1);
    expect(match('The user does not live in Paris.')).toBe(-1);
    expect(claimMatcher([])('I already sent the invoice to Northwind Logistics')).toBe(-1);
  });

  it('answers as containsClaim on every pair', () => {
    const texts = [
      'I already sent the invoice to Northwind Logistics',
      'The meeting moved to Tuesday morning',
      'nothing here',
      'The user never lived in Paris',
    ];
    for (const t of texts) {
      expect(match(t)).toBe(claims.findIndex((c) => containsClaim(t, c)));
    }
  });

  // a small vocabulary, so that claims share words, texts say most of a claim, and negators,
  // "user", stopwords and inflections meet: the matcher checks only the claims a text could say
  const WORDS = (
    'invoice invoices sent send Northwind Logistics Paris lives meeting moved Tuesday Thursday ' +
    "contract signed user the to not never didn't already I she report filed Acme"
  ).split(' ');
  const sentence = (max: number) =>
    fc.array(fc.constantFrom(...WORDS), { maxLength: max }).map((w) => w.join(' '));

  it('answers, for any claims and text, the first claim containsClaim finds (property)', () => {
    fc.assert(
      fc.property(
        fc.array(sentence(7), { maxLength: 40 }),
        fc.array(sentence(14), { minLength: 1, maxLength: 8 }),
        (claimList, texts) => {
          const m = claimMatcher(claimList);
          for (const t of texts) {
            expect(m(t)).toBe(claimList.findIndex((c) => containsClaim(t, c)));
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('finds a claim said with one of its five words missing, and not with two (prefix filter)', () => {
    // "invoice", "sent", "northwind", "logistics", "already": 4 of 5 is 0.8, 3 of 5 is not
    const m = claimMatcher([
      'The report was filed',
      'I already sent the invoice to Northwind Logistics',
    ]);
    expect(m('I sent the invoice to Northwind Logistics')).toBe(1);
    expect(m('I already sent the invoice to Northwind')).toBe(1);
    expect(m('I sent the invoice to Northwind')).toBe(-1);
    expect(m('already Northwind Logistics')).toBe(-1);
  });
});
