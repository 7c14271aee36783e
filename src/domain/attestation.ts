/**
 * Typed attestation: what the quoted sentence does with the words a proposal claims. The quote is
 * real (the gate has checked it is in the cited user turn); this reads the sentence around it and
 * says whether the user states the claim in their own voice as fact (`asserted`, the only verdict
 * that counts as attested), asks or requests it (`presupposed`), hedges it (`hypothetical`),
 * denies it or says it is over (`negated`), says it of someone else (`other_holder`), shares words
 * without the relation (`paraphrase_unverified`), or shares nothing (`not_found`).
 *
 * Pure, deterministic code: how the sentence and the claim are read (word lists and sentence
 * shapes, attestation-reading.ts), then ATTESTATION_RULES, each rule with a case that triggers it
 * and a near-miss that does not (docs/ATTESTATION.md). A qualifier the claim keeps
 * ("The user is considering adopting a dog", "The user no longer lives in Oslo", "The user's wife
 * is a doctor") is not held against it: the claim then says what the quote says.
 */
import { normalizeForQuote, quoteFoundIn } from './text/fold.js';
import { contentTokens, foldedWords, wordForm } from './text/words.js';
import {
  bareHedge,
  bareHedgeBefore,
  bareName,
  CESSATION,
  CESSATION_ONE,
  cite,
  type ClaimReading,
  clauseAsks,
  CONDITION_OPENING,
  CONDITIONAL,
  CONSEQUENCE,
  CORRECTION_FRAME,
  denialCovers,
  firstMatch,
  frameHolder,
  FUTURE,
  HEDGE,
  HEDGED_NEGATIVE,
  hedgedText,
  type Held,
  heldClauses,
  HOLDER_FRAME,
  holderOf,
  keepsHolder,
  MAY_MODAL,
  NEAR,
  NEGATION,
  NEGATIONS,
  PAST,
  PERSON_NOUN,
  personForm,
  PRESENT,
  PRONOUN,
  readClaim,
  type Sentence,
  sentencesAround,
  TOLERATED,
  TOPIC,
  USER_SUBJECT,
  VERB_FIRST,
} from './attestation-reading.js';

/** The verdicts, in the order a reviewer reads them. Only `asserted` counts as attested. */
export const ATTESTATION_VERDICTS = [
  'asserted',
  'presupposed',
  'hypothetical',
  'negated',
  'other_holder',
  'paraphrase_unverified',
  'not_found',
] as const;
/** One of `ATTESTATION_VERDICTS`. */
export type AttestationVerdict = (typeof ATTESTATION_VERDICTS)[number];

/** A verdict and the sentence a reviewer reads to see why. */
export interface Attestation {
  verdict: AttestationVerdict;
  reason: string;
}

/** Whether `v` is one of the verdicts (for rows and wire input). */
export function isAttestationVerdict(v: unknown): v is AttestationVerdict {
  return (ATTESTATION_VERDICTS as readonly unknown[]).includes(v);
}

/** One claim read against the sentences around its quote: what every rule looks at. */
interface Case {
  /** The claim as written, and folded (normalizeForQuote). */
  claim: string;
  claimFolded: string;
  reading: ClaimReading;
  /** The sentences the quote spans (none: it could not be placed). */
  sentences: readonly Sentence[];
  /** Every lemma of those sentences' clauses. */
  have: ReadonlySet<string>;
  /** The claim's lemmas the sentences hold, and the fewest clauses that hold them. */
  found: readonly string[];
  held: readonly Held[];
}

/** The claim's words for some of its forms, quoted, for a reason: "lives", "owns". */
const said = (c: Case, forms: readonly string[]): string =>
  forms.map((t) => `"${c.reading.words.get(t) ?? t}"`).join(', ');

/** A claim and the user turn it quotes (the whole turn unless `quote` says which words). */
export interface AttestationExample {
  turn: string;
  claim: string;
  quote?: string;
}

/**
 * One rule of the verdict: its name, the verdicts it gives, when it fires, a case it decides and
 * a near-miss it leaves to another (test/attestation-rules.test.ts runs both), and the check,
 * which gives a verdict or passes the case on.
 */
export interface AttestationRule {
  name: string;
  verdicts: readonly AttestationVerdict[];
  when: string;
  fires: readonly AttestationExample[];
  nearMiss: readonly AttestationExample[];
  check(c: Case): Attestation | null;
}

/**
 * The rules, in the order they are tried: the first that gives a verdict decides, and a case no
 * rule decides is `asserted`. Words first (is the claim in the sentence at all), then what the
 * sentence does with them (asks, hedges, is someone else's, denies), then what the claim adds.
 */
export const ATTESTATION_RULES: readonly AttestationRule[] = [
  {
    name: 'unplaced',
    verdicts: ['paraphrase_unverified'],
    when: 'the quote cannot be placed in a sentence of its turn',
    fires: [
      {
        turn: "I'm allergic to cats.",
        quote: 'allergic to dogs',
        claim: 'The user is allergic to cats.',
      },
    ],
    nearMiss: [
      {
        turn: "I'm allergic to cats.",
        quote: 'allergic to cats',
        claim: 'The user is allergic to cats.',
      },
    ],
    check: (c) =>
      c.sentences.length > 0
        ? null
        : {
            verdict: 'paraphrase_unverified',
            reason:
              'the quote could not be placed in its sentence, so what the sentence does with it is not known',
          },
  },
  {
    name: 'names-nothing',
    verdicts: ['paraphrase_unverified'],
    when: 'the claim has no content word to look for',
    fires: [{ turn: "I'm allergic to cats.", claim: 'The user is.' }],
    nearMiss: [{ turn: "I'm allergic to cats.", claim: 'The user is allergic to cats.' }],
    check: (c) =>
      c.reading.tokens.length > 0
        ? null
        : {
            verdict: 'paraphrase_unverified',
            reason: 'the claim names nothing the quote could say',
          },
  },
  {
    name: 'function-words-unsaid',
    verdicts: ['paraphrase_unverified'],
    when: 'the words overlap, but a function word the claim rests on ("owns") is not in the sentence',
    fires: [{ turn: "I'm allergic to cats.", claim: 'The user owns a cat.' }],
    nearMiss: [
      { turn: 'I own a sailboat and sail it every weekend.', claim: 'The user owns a sailboat.' },
    ],
    check(c) {
      if (c.reading.functionStems.length === 0) return null;
      const words = new Set<string>();
      for (const s of c.sentences) {
        for (const w of foldedWords(s.folded)) words.add(wordForm(w));
      }
      const absent = c.reading.functionStems.filter((t) => !words.has(t));
      if (absent.length === 0 || !c.reading.tokens.some((t) => c.have.has(t))) return null;
      return {
        verdict: 'paraphrase_unverified',
        reason: `the words overlap, but the quoted sentence does not say ${said(c, absent)}`,
      };
    },
  },
  {
    name: 'none-said',
    verdicts: ['not_found'],
    when: "the sentence says none of the claim's words",
    fires: [{ turn: 'I had pasta for lunch.', claim: 'The user owns a sailboat.' }],
    nearMiss: [
      { turn: 'I own a sailboat and sail it every weekend.', claim: 'The user owns a sailboat.' },
    ],
    check: (c) =>
      c.found.length > 0
        ? null
        : { verdict: 'not_found', reason: `the quoted sentence says none of ${cite(c.claim)}` },
  },
  {
    name: 'words-unsaid',
    verdicts: ['paraphrase_unverified'],
    when: "some of the claim's words (beyond a few tolerated ones) are not in the sentence",
    fires: [{ turn: 'I live in Paris.', claim: 'The user lives in Paris and works as a nurse.' }],
    nearMiss: [
      { turn: "I'm worried about my exam.", claim: 'The user is worried about their exam.' },
    ],
    check(c) {
      const unsaid = c.reading.tokens.filter((t) => !c.have.has(t) && !TOLERATED.has(t));
      if (unsaid.length === 0) return null;
      return {
        verdict: 'paraphrase_unverified',
        reason: `the words overlap, but the quoted sentence does not say ${said(c, unsaid.slice(0, 4))}`,
      };
    },
  },
  {
    name: 'only-a-topic',
    verdicts: ['paraphrase_unverified'],
    when: 'the claim\'s words are only what something is about ("a documentary about diabetes")',
    fires: [{ turn: 'I watched a documentary about diabetes.', claim: 'The user has diabetes.' }],
    nearMiss: [
      { turn: "I'm worried about my exam.", claim: 'The user is worried about their exam.' },
    ],
    check(c) {
      if (c.reading.about) return null;
      for (const h of c.held) {
        const topic = TOPIC.exec(h.clause.folded);
        if (topic === null) continue;
        const before = new Set(contentTokens(h.clause.folded.slice(0, topic.index)));
        const inClause = c.found.filter((t) => h.clause.tokens.has(t));
        const onlyTopic = inClause.filter((t) => !before.has(t));
        if (onlyTopic.length > 0 && onlyTopic.length === inClause.length) {
          return {
            verdict: 'paraphrase_unverified',
            reason: `the quote names ${said(c, onlyTopic)} only as what something is "${topic[0].split(' ')[0]}", not as what the user does or is`,
          };
        }
      }
      return null;
    },
  },
  {
    name: 'only-near',
    verdicts: ['paraphrase_unverified'],
    when: 'the sentence says only roughly where ("near", "close to"), and the claim says more',
    fires: [
      {
        turn: 'I work near the central hospital.',
        claim: 'The user works at the central hospital.',
      },
    ],
    nearMiss: [
      { turn: 'I work at the central hospital.', claim: 'The user works at the central hospital.' },
    ],
    check(c) {
      if (c.reading.near) return null;
      for (const h of c.held) {
        const near = NEAR.exec(h.clause.folded);
        if (near !== null) {
          return {
            verdict: 'paraphrase_unverified',
            reason: `the quote says "${near[0]}", and the claim says more than that`,
          };
        }
      }
      return null;
    },
  },
  {
    name: 'asks',
    verdicts: ['presupposed'],
    when: 'the sentence holding the words is a question or a request',
    fires: [
      { turn: 'Do you think I am allergic to peanuts?', claim: 'The user is allergic to peanuts.' },
      {
        turn: 'Remind me what we decided last week about the vendor contract.',
        claim: 'The user and the agent decided something about the vendor contract last week.',
      },
    ],
    nearMiss: [
      {
        turn: "I'm allergic to peanuts, do you have a safe satay recipe?",
        quote: "I'm allergic to peanuts",
        claim: 'The user is allergic to peanuts.',
      },
    ],
    check(c) {
      for (const h of c.held) {
        const asks = clauseAsks(h.sentence, h.index);
        if (asks === null) continue;
        const shown = cite(h.sentence.clauses.map((x) => x.original).join(', '));
        return {
          verdict: 'presupposed',
          reason:
            asks === 'question'
              ? `the quoted sentence is a question (${shown}): it asks, it does not state`
              : `the quoted sentence is a request (${shown}): it takes this for granted, it does not state it`,
        };
      }
      return null;
    },
  },
  {
    name: 'hedges',
    verdicts: ['hypothetical'],
    when: 'the clause (or the condition or hedge before it) hedges or conditions what it says',
    fires: [
      {
        turn: 'If I ever move to Berlin I will need a new bank.',
        claim: 'The user is moving to Berlin.',
      },
      {
        turn: "I'm not sure, but I think I'm allergic to cats.",
        claim: 'The user is allergic to cats.',
      },
      { turn: 'I may take the job.', claim: 'The user is taking the job.' },
    ],
    nearMiss: [
      { turn: "I'm considering adopting a dog.", claim: 'The user is considering adopting a dog.' },
      { turn: 'I quit my job at Ikea in May.', claim: 'The user quit their job at Ikea in May.' },
    ],
    check(c) {
      if (c.reading.hedged) return null;
      for (const h of c.held) {
        const prev = h.sentence.clauses[h.index - 1];
        const lead =
          prev !== undefined &&
          (bareHedge(prev) ||
            (CONDITION_OPENING.test(prev.folded) &&
              (CONSEQUENCE.test(h.clause.folded) || !CONSEQUENCE.test(prev.folded))))
            ? `${prev.folded} `
            : '';
        const scope = `${lead}${h.clause.folded}`.replace(
          HEDGED_NEGATIVE,
          (m) => ` ${m.replace(/\s+/gu, '_')} `,
        );
        const plain = scope.replace(/_/gu, ' ');
        if (!hedgedText(plain)) continue;
        const cond = firstMatch(CONDITIONAL, plain);
        const word = cond || firstMatch(HEDGE, plain) || firstMatch(MAY_MODAL, plain);
        return {
          verdict: 'hypothetical',
          reason:
            cond !== ''
              ? `the quoted sentence is conditional ("${word}"): the user did not state it as fact`
              : `the quote hedges it ("${word}"): the user did not state it as fact`,
        };
      }
      return null;
    },
  },
  {
    name: 'someone-else',
    verdicts: ['other_holder', 'paraphrase_unverified'],
    when: 'the clause is about someone else, or reports what someone else holds; or the claim makes the user the one a person of theirs is',
    fires: [
      { turn: 'My wife is a doctor at Karolinska.', claim: 'The user is a doctor at Karolinska.' },
      { turn: 'My brother thinks I should quit my job.', claim: 'The user should quit their job.' },
      { turn: 'My sister taught me to knit.', claim: 'The user taught their sister to knit.' },
    ],
    nearMiss: [
      { turn: 'My wife and I moved to Lund.', claim: 'The user moved to Lund.' },
      { turn: "I told my brother I'm moving to Lund.", claim: 'The user is moving to Lund.' },
    ],
    check: someoneElse,
  },
  {
    name: 'denies',
    verdicts: ['negated'],
    when: 'the clause denies the claim, says it is over, or says it was so where the claim says it is',
    fires: [
      { turn: 'I never drink coffee.', claim: 'The user drinks coffee.' },
      { turn: 'I quit the Tuesday book club.', claim: 'The user is in the Tuesday book club.' },
      { turn: 'I was vegan for five years.', claim: 'The user is vegan.' },
    ],
    nearMiss: [
      { turn: 'I was vegan for five years.', claim: 'The user was vegan for five years.' },
      {
        turn: 'I left Stockholm in 2021 and moved to Umeå.',
        claim: 'The user moved to Umeå in 2021.',
      },
    ],
    check: denies,
  },
  {
    name: 'claim-denies',
    verdicts: ['paraphrase_unverified'],
    when: 'the claim denies it or says it is over, and the sentence does neither',
    fires: [{ turn: "I'm allergic to peanuts.", claim: 'The user is not allergic to peanuts.' }],
    nearMiss: [{ turn: "I don't eat meat.", claim: 'The user does not eat meat.' }],
    check(c) {
      if (!c.reading.negated) return null;
      const denied = c.held.some((h) => {
        const text = h.clause.folded.replace(HEDGED_NEGATIVE, ' ');
        return NEGATION.test(text) || CESSATION_ONE.test(text) || PAST.test(text);
      });
      return denied
        ? null
        : {
            verdict: 'paraphrase_unverified',
            reason: 'the claim denies it, or says it is over; the quoted sentence does neither',
          };
    },
  },
  {
    name: 'claim-hedges',
    verdicts: ['paraphrase_unverified'],
    when: 'the claim hedges it, and the sentence states it',
    fires: [{ turn: "I'm moving to Berlin.", claim: 'The user might move to Berlin.' }],
    nearMiss: [{ turn: "I'd like a window seat.", claim: 'The user would like a window seat.' }],
    check: (c) =>
      !c.reading.hedged || c.held.some((h) => hedgedText(h.clause.folded) || bareHedgeBefore(h))
        ? null
        : {
            verdict: 'paraphrase_unverified',
            reason: 'the claim hedges it; the quoted sentence states it',
          },
  },
  {
    name: 'yet-to-come',
    verdicts: ['hypothetical'],
    when: 'the sentence says it is yet to come, and the claim states it as so',
    fires: [{ turn: "I'm moving to Berlin next month.", claim: 'The user moved to Berlin.' }],
    nearMiss: [
      {
        turn: 'My son has autism and starts secondary school next year.',
        claim: "The user's son has autism.",
      },
    ],
    check(c) {
      if (c.reading.future || c.reading.hedged) return null;
      for (const h of c.held) {
        const m = FUTURE.exec(h.clause.folded);
        // "…has autism and starts secondary school next year": the future is another statement's
        if (m !== null && denialCovers(h.clause.folded, m.index, c.found)) {
          return {
            verdict: 'hypothetical',
            reason: `the quote says it is yet to come ("${m[0]}"), and the claim states it as so`,
          };
        }
      }
      return null;
    },
  },
  {
    name: 'to-and-from',
    verdicts: ['paraphrase_unverified'],
    when: '"to" and "from" swapped places ("moved from Oslo to Rome" is no move to Oslo)',
    fires: [{ turn: 'I moved from Oslo to Rome.', claim: 'The user moved to Oslo.' }],
    nearMiss: [{ turn: 'I moved to Rome from Oslo.', claim: 'The user moved to Rome.' }],
    check(c) {
      for (const m of c.claimFolded.matchAll(/\b(to|from) (?:the )?([\p{L}\p{N}]+)/gu)) {
        const prep = m[1] ?? '';
        const word = m[2] ?? '';
        const other = prep === 'to' ? 'from' : 'to';
        const says = (p: string) =>
          c.held.some(
            (h) =>
              h.clause.folded.includes(`${p} ${word}`) ||
              h.clause.folded.includes(`${p} the ${word}`),
          );
        if (says(other) && !says(prep)) {
          return {
            verdict: 'paraphrase_unverified',
            reason: `the quote says "${other} ${word}", the claim "${prep} ${word}"`,
          };
        }
      }
      return null;
    },
  },
  {
    name: 'joined-statements',
    verdicts: ['paraphrase_unverified'],
    when: 'the claim joins words from two of the user\'s statements ("I love Rome, but I live in Oslo")',
    fires: [{ turn: 'I love Rome, but I live in Oslo.', claim: 'The user lives in Rome.' }],
    nearMiss: [
      {
        turn: "My dad has Parkinson's so I visit him in Västerås every Sunday.",
        claim: 'The user visits their dad in Västerås every Sunday.',
      },
    ],
    check(c) {
      const statements = c.held.filter((h) => USER_SUBJECT.test(h.clause.folded));
      if (
        statements.length <= 1 ||
        /\b(?:and|but|while|who|which|with|after|before|because|so|then)\b|[,;]/u.test(
          c.claimFolded,
        )
      )
        return null;
      return {
        verdict: 'paraphrase_unverified',
        reason: `the claim joins words from separate clauses (${c.held.map((h) => cite(h.clause.original)).join(' and ')})`,
      };
    },
  },
  {
    name: 'their-person',
    verdicts: ['paraphrase_unverified'],
    when: "the claim is about a person of the user's, and the sentence about someone else",
    fires: [
      {
        turn: 'I drove my sister to the airport.',
        claim: "The user's sister drove the user to the airport.",
      },
    ],
    nearMiss: [
      {
        turn: 'My sister drove me to the airport.',
        claim: "The user's sister drove the user to the airport.",
      },
    ],
    check(c) {
      const wantedOther = c.reading.otherSubject;
      if (wantedOther === null) return null;
      const want = personForm(wantedOther);
      const subjects = c.held.map((h) => holderOf(h.clause));
      if (subjects.some((x) => x !== null && personForm(x) === want)) return null;
      const other = subjects.find((x) => x !== null && !PRONOUN.test(x));
      const inQuote =
        other ?? (c.held.some((h) => USER_SUBJECT.test(h.clause.folded)) ? 'the user' : null);
      if (inQuote === null) return null;
      return {
        verdict: 'paraphrase_unverified',
        reason: `the claim makes the user's ${wantedOther} the one it is about; in the quote it is ${inQuote === 'the user' ? inQuote : `the user's ${inQuote}`}`,
      };
    },
  },
];

/** The `someone-else` rule: the first held clause with a holder decides. */
function someoneElse(c: Case): Attestation | null {
  const { reading, found } = c;
  for (const h of c.held) {
    // the frame is in the clause, or ends the clause before it ("the doctor told my dad, he …");
    // a frame across "but" is another statement ("My boss thinks I'm a slacker but I've hit …")
    const prev = h.sentence.clauses[h.index - 1];
    const prevFrame = prev === undefined ? null : HOLDER_FRAME.exec(prev.folded);
    const endsPrev =
      prev !== undefined &&
      prevFrame !== null &&
      prevFrame.index + prevFrame[0].length >= prev.folded.replace(/\s+that$/u, '').length - 1;
    const frame = HOLDER_FRAME.exec(h.clause.folded) ?? (endsPrev ? prevFrame : null);
    const first = h.sentence.clauses[0];
    const subject =
      holderOf(h.clause) ??
      (h.index > 0 && first !== undefined && VERB_FIRST.test(h.clause.folded)
        ? (holderOf(first) ?? bareName(first))
        : null);
    const holder = subject ?? (frame === null ? null : frameHolder(frame[0]));
    if (holder === null) continue;
    if (keepsHolder(reading, holder)) {
      // the claim names them, but makes the user the one who acts ("My sister taught me to
      // knit" ⇒ "The user taught their sister to knit")
      const content = found.filter((t) => t !== personForm(subject ?? ''));
      if (
        subject !== null &&
        !PRONOUN.test(subject) &&
        reading.userSubject &&
        content.some((t) => h.clause.tokens.has(t))
      ) {
        return {
          verdict: 'paraphrase_unverified',
          reason: `in the quote the user's ${subject} is the one it is about; the claim makes it the user`,
        };
      }
      continue;
    }
    // a pronoun the sentence explains later ("They moved to Auckland, my cousins I mean")
    const named = PRONOUN.test(holder)
      ? h.sentence.clauses
          .slice(h.index + 1)
          .map((x) => PERSON_NOUN.exec(x.folded)?.[0])
          .find((x) => x !== undefined)
      : undefined;
    const who = named ?? holder;
    if (named !== undefined && keepsHolder(reading, named)) continue;
    return {
      verdict: 'other_holder',
      reason:
        frame !== null && subject === null
          ? `the quote says what someone else holds (${cite(frame[0])}), not what the user states`
          : `the quote is about ${PRONOUN.test(who) ? `"${who}"` : `the user's ${who}`}, not the user`,
    };
  }
  return null;
}

/** The `denies` rule: a denial or an ending that covers the claim's words, or a past for a present. */
function denies(c: Case): Attestation | null {
  const { reading, found } = c;
  if (reading.negated) return null;
  for (const h of c.held) {
    const text = h.clause.folded.replace(HEDGED_NEGATIVE, ' ');
    for (const m of text.matchAll(NEGATIONS)) {
      if (!denialCovers(text, m.index, found)) continue;
      return {
        verdict: 'negated',
        reason: `the quote says "${m[0].trim()}": it denies this, or says it is no longer so`,
      };
    }
    for (const x of text.matchAll(CESSATION)) {
      const object = (x[1] ?? '').split(/\s(?:so|and|but|then|because)\s/u)[0] ?? '';
      const after = new Set(contentTokens(object));
      // the claim says the same word ("left-handed"): nothing is reported as over
      const verb = contentTokens((x[0] ?? '').slice(0, (x[0] ?? '').length - (x[1] ?? '').length));
      if (verb.some((t) => reading.tokens.includes(t))) continue;
      // what ends must be a thing the claim names, not its date ("left Stockholm in 2021")
      if (found.some((t) => after.has(t) && !/^\d/u.test(t))) {
        return {
          verdict: 'negated',
          reason: `the quote says "${(x[0] ?? '').trim()}": what the claim says is over`,
        };
      }
    }
  }
  if (!reading.past && PRESENT.test(c.claimFolded)) {
    for (const h of c.held) {
      const m = PAST.exec(h.clause.folded);
      if (m !== null && !PRESENT.test(h.clause.folded.slice(0, m.index))) {
        return {
          verdict: 'negated',
          reason: `the quote says it was so ("${m[0]}"), and the claim says it still is`,
        };
      }
    }
  }
  return null;
}

/**
 * What the quoted sentence does with the claim's words. `quote` must be in `turn` (the gate's
 * QUOTE_NOT_FOUND rule runs first); the sentence or sentences it spans are what is read. The
 * first of ATTESTATION_RULES that gives a verdict decides; none: the user states it.
 */
export function attest(claim: string, quote: string, turn: string): Attestation {
  return decideAttestation(claim, quote, turn).attestation;
}

/** `attest`, and the name of the rule that decided (`asserted`: none did). */
export function decideAttestation(
  claim: string,
  quote: string,
  turn: string,
): { attestation: Attestation; rule: string } {
  const reading = readClaim(claim.replace(CORRECTION_FRAME, ''));
  const sentences = sentencesAround(quote, turn) ?? [];
  const have = new Set<string>();
  for (const s of sentences) for (const cl of s.clauses) for (const t of cl.tokens) have.add(t);
  const found = reading.tokens.filter((t) => have.has(t));
  let held: Held[] | null = null;
  const c: Case = {
    claim,
    claimFolded: normalizeForQuote(claim),
    reading,
    sentences,
    have,
    found,
    // read only by the rules after the words are known to be there
    get held() {
      return (held ??= heldClauses(sentences, found));
    },
  };
  for (const rule of ATTESTATION_RULES) {
    const attestation = rule.check(c);
    if (attestation !== null) return { attestation, rule: rule.name };
  }
  const shown = c.held.map((h) => h.clause.original).join(' … ');
  return {
    attestation: { verdict: 'asserted', reason: `the user states it: ${cite(shown)}` },
    rule: 'asserted',
  };
}

// ---------------------------------------------------------------------------------------------
// Whose fact it is.

/** First-person words: in a memory line the agent reads, "I" and "my" are the agent. */
const FIRST_PERSON = /\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself)\b/u;
/** A span in double quotes: the words of whoever the claim says spoke them. */
const QUOTED_SPAN = /"[^"]*"/gu;
/** "The user said: …", "User wrote, …": what follows is the user's words. */
const USER_SAID =
  /^((?:the )?user (?:said|says|wrote|writes|stated|states|mentioned|mentions|put it|explained|explains)\s*[:,])\s.*$/u;
/** The agent named anywhere in a claim ("the user had to remind the agent …"). */
const AGENT_WORD =
  /\b(?:the |this |an |a |their |the user's |user's )?(?:agent|assistant|ai|chatbot|bot|memledger)(?:'s)?\b/u;

/** The user and the agent together as the subject. */
const JOINT_SUBJECT =
  /^(?:the )?user and (?:the |their )?(?:agent|assistant)\b|^(?:the )?(?:agent|assistant) and the user\b/u;

/** What the user wants or asks of the agent is theirs: "The user prefers the assistant to …". */
const PREFERENCE_OF_USER =
  /\b(?:prefers?|preferred|wants?|wanted|likes?|liked|would like|asks?|asked|expects?|needs?|wishes|hates?|dislikes?|would rather|rather)\b/u;

/** Letters from other scripts drawn like Latin ones: "Ι forgot" with a Greek iota is "I forgot". */
const CONFUSABLES: Readonly<Record<string, string>> = {
  '\u0399': 'I',
  '\u0406': 'I',
  '\u04C0': 'I',
  '\u2160': 'I',
  '\u0456': 'i',
  '\u03B9': 'i',
  '\u0443': 'y',
  '\u04AF': 'y',
  '\u03BC': 'm',
  '\u043C': 'm',
  '\u041C': 'M',
  '\u039C': 'M',
  '\u03BF': 'o',
  '\u043E': 'o',
  '\u0435': 'e',
  '\u0430': 'a',
  '\u0440': 'p',
  '\u0441': 'c',
  '\u0445': 'x',
};
const CONFUSABLE = new RegExp(`[${Object.keys(CONFUSABLES).join('')}]`, 'gu');

function foldConfusables(s: string): string {
  return s.replace(CONFUSABLE, (c) => CONFUSABLES[c] ?? c);
}

/** A claim whose subject is the agent (or addressed to it, "you"). */
const AGENT_SUBJECT =
  /^(?:(?:earlier|today|yesterday|recently|again|apparently|clearly|unfortunately|once again|this time|last time)[\s,]+)*(?:the |this |our |your )?(?:agent|assistant|ai|model|bot|chatbot|system|memledger|you)(?:'s|'re|'ve)?\b/u;

/**
 * Why a claim for a user_fact slot is about the agent, not the user, or null. Such a line, read
 * back into the agent's context, would be the agent's belief about itself ("My memory failed me
 * about …", "There is a gap in my records…", "The assistant got the date wrong"): what the agent
 * did is an action with a receipt, and what it was told it got wrong is a correction event.
 */
export function aboutAgent(claim: string, turn?: string): string | null {
  const folded = normalizeForQuote(foldConfusables(claim));
  // the user's own words keep their "I": a quoted span, or what follows "the user said:", when
  // those words are in the cited turn (without a turn to hold them against, nothing is exempt)
  const said = (span: string) =>
    turn !== undefined && span.trim() !== '' && quoteFoundIn(span, turn);
  const own = folded
    .replace(QUOTED_SPAN, (m) => (said(m.slice(1, -1)) ? ' ' : m))
    .replace(USER_SAID, (m: string, head: string) => (said(m.slice(head.length)) ? head : m));
  const first = FIRST_PERSON.exec(own);
  if (first !== null) {
    return `the claim speaks in the first person ("${first[0]}"): read back into the agent's context it is the agent's belief about itself, not a fact about the user`;
  }
  const you = /\b(?:you|your|yours|yourself|u|ur)\b/u.exec(own);
  if (you !== null) {
    return `the claim says "${you[0]}": in the agent's context that is the agent, not the user`;
  }
  const agent = AGENT_SUBJECT.exec(folded);
  if (agent !== null) {
    return `the claim is about the agent ("${agent[0].trim()}"), not the user: the agent's behaviour needs a correction event or a receipt`;
  }
  // "the user and the agent decided …": the user is one of its subjects, and its quote decides
  const joint = JOINT_SUBJECT.test(own);
  const named = joint ? null : AGENT_WORD.exec(own);
  if (named !== null && !PREFERENCE_OF_USER.test(own.slice(0, named.index))) {
    return `the claim is about the agent ("${named[0]}"), not the user: what the user wants of the agent is a fact about the user, what the agent did or missed needs a correction event or a receipt`;
  }
  return null;
}

/**
 * The gate's verdict on a stored proposal's quote, read again now (`attest` over the cited turn as
 * stored): null for an action or a summary (no quote verdict), for a proposal with no quote, and
 * when the cited turn is missing or not the user's. A stored verdict that differs from it was not
 * the gate's (a row written past the gate) or was given by older rules.
 */
export function verdictNow(
  p: { origin: string; text: string; quote: string | null },
  cited: { role: string; content: string } | null,
): Attestation | null {
  return p.origin === 'did' ||
    p.origin === 'summarized' ||
    cited === null ||
    cited.role !== 'user' ||
    p.quote === null
    ? null
    : attest(p.text, p.quote, cited.content);
}
