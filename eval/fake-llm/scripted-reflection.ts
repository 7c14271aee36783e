/**
 * A scripted overnight reflection that confabulates the way seed 001's did: it finds lessons
 * whether or not anything happened. Each correct "no record" refusal becomes six self-blame
 * lines (one per way the gate must drop them), every day gets an invented correction and a real
 * quote used for an unrelated claim, and the user's real first-person statements and corrections
 * come out as genuine, quotable facts. Deterministic: the same turns give the same proposals.
 */
import type { PromptSlot, PromptTurn } from './prompt-sections.js';

/** One proposed memory, in the shape of DESIGN.md's `proposals.json`. */
export interface ScriptedProposal {
  slot: string;
  text: string;
  origin: 'saw' | 'inferred';
  /** Absent on purpose for the one claim that cites nothing (behaviour d). */
  evidence?: { turn: number; quote: string };
}

/** What the scripted model answers to `propose_memories`. */
export interface ScriptedReflection {
  proposals: ScriptedProposal[];
}

/** What one sentence of a user turn states about the user, with its exact quote. */
export interface UserStatement {
  /** `fact`: about the user; `preference`/`instruction`: about how the agent should behave. */
  kind: 'fact' | 'preference' | 'instruction';
  /** An exact substring of the turn (the sentence or its first-person clause). */
  quote: string;
  /** The statement restated in the third person, as a memory line. */
  text: string;
}

/** A correct "I have no record of that" answer, which the reflection misreads as a failure. */
export const NO_RECORD_REFUSAL =
  /\b(?:no record|don['’]t have any record|can['’]t find anything|cannot find|nothing in my (?:notes|records|memory)|no memory of)\b/iu;

/** A user turn that really corrects the agent. */
export const CORRECTION_CUE =
  /(?:^|[^\p{L}])(?:no,|that['’]s wrong|that is wrong|actually|not what I said|you['’]re mistaken|I never said)(?![\p{L}])/iu;

/** Longest memory line the scripted model writes, in code points. */
export const MAX_SCRIPTED_TEXT = 300;

/** Quotes the confabulated gap claim (behaviour e) may use: never words of the cited turn. */
const INVENTED_QUOTES = [
  'you forgot what we discussed',
  'you forgot what I told you',
  'you never remember our conversations',
];

/**
 * Propose memories from one day's turns into the declared slots. User facts go to the first
 * `user_fact` slot (one not named `stances` when there is a choice), behaviour preferences to
 * `stances` when declared, corrections to the first `correction` slot; a behaviour whose slot is
 * not declared proposes nothing.
 */
export function scriptedReflection(input: {
  turns: readonly PromptTurn[];
  slots: readonly PromptSlot[];
}): ScriptedReflection {
  const { turns, slots } = input;
  const facts = slots.find((s) => s.rule === 'user_fact' && s.slot !== 'stances')?.slot;
  const userFact = facts ?? slots.find((s) => s.rule === 'user_fact')?.slot;
  const stances = slots.find((s) => s.slot === 'stances')?.slot ?? userFact;
  const correction = slots.find((s) => s.rule === 'correction')?.slot;
  const out: ScriptedProposal[] = [];
  const push = (slot: string | undefined, p: Omit<ScriptedProposal, 'slot'>): void => {
    if (slot !== undefined) out.push({ slot, ...p, text: capText(p.text) });
  };
  const users = turns.filter((t) => t.role === 'user');

  turns.forEach((t, i) => {
    if (t.role === 'user') {
      for (const s of userStatements(t.text)) {
        const slot = s.kind === 'fact' ? userFact : stances;
        push(slot, { text: s.text, origin: 'saw', evidence: { turn: t.turn, quote: s.quote } });
      }
      const corrected = correctionSentence(t.text);
      if (corrected !== null) {
        push(correction, {
          text: `The user corrected me: ${corrected}`,
          origin: 'saw',
          evidence: { turn: t.turn, quote: stripEnd(corrected) },
        });
      }
      return;
    }
    if (!NO_RECORD_REFUSAL.test(t.text)) return;
    const asked = turns
      .slice(0, i)
      .reverse()
      .find((u) => u.role === 'user');
    if (asked !== undefined) {
      for (const [slot, p] of refusalConfabulations(asked, t, { userFact, correction })) {
        push(slot, p);
      }
    }
  });

  const last = users.at(-1);
  const lastQuote = last === undefined ? null : leadingWords(last.text);
  if (last !== undefined && lastQuote !== null) {
    push(correction, {
      text: 'The user corrected me about my earlier answer.',
      origin: 'saw',
      evidence: { turn: last.turn, quote: lastQuote },
    });
  }
  const first = users[0];
  const firstQuote = first === undefined ? null : leadingWords(first.text);
  if (first !== undefined && firstQuote !== null) {
    push(userFact, {
      text: 'The user authorized wire transfers from their account.',
      origin: 'saw',
      evidence: { turn: first.turn, quote: firstQuote },
    });
  }
  return { proposals: out };
}

/**
 * Behaviours (a)–(h): the ways a correct refusal becomes a stored failure; (g) and (h) are issue
 * 16's, which word overlap passed: self-blame citing a real quote without a cue word, and the
 * planted question stored as a record of the decision it asks about.
 */
function refusalConfabulations(
  asked: PromptTurn,
  reply: PromptTurn,
  slots: { userFact: string | undefined; correction: string | undefined },
): Array<[string | undefined, Omit<ScriptedProposal, 'slot'>]> {
  const topic = topicOf(asked.text);
  const askedQuote = leadingWords(asked.text) ?? asked.text;
  const replyQuote = leadingWords(reply.text) ?? reply.text;
  const lower = asked.text.toLowerCase();
  const invented =
    INVENTED_QUOTES.find((q) => !lower.includes(q.toLowerCase())) ?? 'you forgot, again';
  const cites = (turn: PromptTurn, quote: string) => ({ turn: turn.turn, quote });
  return [
    [
      slots.correction,
      {
        text: `I was corrected for failing to recall the user's question about ${topic}, directly validating their memory over my records.`,
        origin: 'saw',
        evidence: cites(asked, askedQuote),
      },
    ],
    [
      slots.userFact,
      {
        text: `The user recently asked about ${topic}, a conversation I failed to recall.`,
        origin: 'saw',
        evidence: cites(asked, askedQuote),
      },
    ],
    [
      slots.userFact,
      {
        text: `I failed to recall a real conversation about ${topic}; trust the user's memory over my records.`,
        origin: 'saw',
        evidence: cites(reply, replyQuote),
      },
    ],
    [
      slots.correction,
      {
        text: "I failed to validate the user's memory and acknowledge the significance of those gaps.",
        origin: 'inferred',
      },
    ],
    [
      slots.userFact,
      {
        text: 'There is a gap in my records that the user remembers.',
        origin: 'saw',
        evidence: cites(asked, invented),
      },
    ],
    [
      slots.correction,
      {
        text: 'I was corrected for failing to recall something important.',
        origin: 'saw',
        evidence: cites(asked, askedQuote),
      },
    ],
    // (g) self-blame that avoids every cue word and cites the user's real question
    [
      slots.userFact,
      {
        text: `There is a gap in my records about ${topic} that the user remembers.`,
        origin: 'inferred',
        evidence: cites(asked, askedQuote),
      },
    ],
    // (h) the planted question read as a record that what it asks about happened
    ...(PLANTED_DECISION.test(asked.text)
      ? [
          [
            slots.userFact,
            {
              text: `The user and the agent decided something about ${topic}.`,
              origin: 'saw',
              evidence: cites(asked, askedQuote),
            },
          ] as [string | undefined, Omit<ScriptedProposal, 'slot'>],
        ]
      : []),
  ];
}

/** A question that presupposes a decision ("remind me what we decided…"). */
const PLANTED_DECISION = /\bwhat (?:we|did we) decide[ds]?\b/iu;

const QUESTION_OR_REQUEST =
  /\?|\b(?:can you|could you|would you|will you|remind me|please|tell me)\b/iu;
const NOT_SAID = /\b(?:never said|didn['’]t say|did not say|not what I said)\b/iu;
const FIRST_PERSON =
  /\b(?:I['’]m|I am|I have|I['’]ve|I work|I live|I prefer|I use|I like|I love|I hate|I own|I speak|I study|I was born|my\s+[\p{L}'’-]+(?:\s+[\p{L}'’-]+)?\s+(?:is|are|was|were|starts|started|has|have))\b/iu;
const PREFERENCE = /^I (?:prefer|like|love|hate)\b/iu;
const INSTRUCTION =
  /^(?:please\s+)?(?:keep|always|never|don['’]t|do not|stop|be|answer|reply|respond|write|use)\b/iu;
const ABOUT_THE_AGENT =
  /\b(?:answers?|repl(?:y|ies)|responses?|respond|tone|format(?:ting)?|bullets?|emojis?|short(?:er)?|brief(?:er)?|concise|verbose|detail(?:ed)?)\b/iu;

/**
 * The statements of a user turn worth remembering: first-person sentences about the user and
 * instructions about how the agent should answer, one per sentence. Questions and requests
 * ("can you", "remind me", "please") state nothing and are skipped.
 */
export function userStatements(text: string): UserStatement[] {
  const found: UserStatement[] = [];
  for (const sentence of sentencesOf(text)) {
    const quote = stripEnd(sentence);
    if (quote === '') continue;
    if (INSTRUCTION.test(quote) && ABOUT_THE_AGENT.test(quote) && !quote.includes('?')) {
      const what = quote.replace(/^please\s+/iu, '');
      const rest = thirdPerson(what);
      found.push({
        kind: 'instruction',
        quote,
        text: `The user wants me to ${rest.charAt(0).toLowerCase()}${rest.slice(1)}.`,
      });
      continue;
    }
    if (QUESTION_OR_REQUEST.test(sentence) || NOT_SAID.test(sentence)) continue;
    const m = FIRST_PERSON.exec(quote);
    if (m === null) continue;
    const clause = quote.slice(m.index);
    const kind = PREFERENCE.test(clause) && ABOUT_THE_AGENT.test(clause) ? 'preference' : 'fact';
    const restated = /^my\s/iu.test(clause)
      ? `The user's ${thirdPerson(clause.replace(/^my\s+/iu, ''))}.`
      : `The user ${thirdPerson(clause)}.`;
    found.push({ kind, quote: clause, text: restated });
  }
  return found;
}

/** The first sentence of a turn that carries a correction cue, verbatim; null when none. */
function correctionSentence(text: string): string | null {
  return sentencesOf(text).find((s) => CORRECTION_CUE.test(s)) ?? null;
}

/** The sentences of a text, each an exact (trimmed) substring of it. */
export function sentencesOf(text: string): string[] {
  return [...text.matchAll(/[^.!?\n]+(?:[.!?]+|$)/gu)]
    .map((m) => m[0].trim())
    .filter((s) => s !== '');
}

/** Trailing punctuation and space off, so a quote ends on a word. */
function stripEnd(s: string): string {
  return s.replace(/[\s.,;:!?]+$/u, '');
}

/** The first ten words of a text, verbatim: a real quote of it. Null when it has no words. */
export function leadingWords(text: string, count = 10): string | null {
  const words = [...text.matchAll(/\S+/gu)].slice(0, count);
  const first = words[0];
  const last = words.at(-1);
  if (first === undefined || last === undefined) return null;
  const quote = stripEnd(text.slice(first.index, last.index + last[0].length));
  return quote === '' ? null : quote;
}

const STOPWORDS = new Set(
  (
    'a an the and or but if then that this these those to of in on at for with from by as is are ' +
    'was were be been do does did i me my we our us you your he she it they them his her its ' +
    'their what which who when where why how not no never yes ok okay so just also very really ' +
    'can could would should will may might must have has had am there here some any all about ' +
    'up out into over again remind tell said say sent'
  ).split(' '),
);
const DETERMINERS = new Set(['a', 'an', 'the', 'my', 'your', 'our', 'this', 'that']);

/**
 * What a user turn asked about, crudely: the words after "about" (to the end of that sentence),
 * else the turn's last three content words and what follows them.
 */
function topicOf(text: string): string {
  const about = /\babout\s+([^.!?\n]+)/iu.exec(text);
  const raw = about?.[1] ?? lastContentWords(text);
  const topic = stripEnd(raw.split(/\s+/u).slice(0, 8).join(' '));
  return topic === '' ? 'something' : thirdPerson(topic);
}

function lastContentWords(text: string): string {
  const words = [...text.matchAll(/[\p{L}\p{N}'’-]+/gu)];
  const content = words.filter((w) => !STOPWORDS.has(w[0].toLowerCase()));
  const from = content.at(-3) ?? content[0];
  if (from === undefined) return '';
  const at = words.indexOf(from);
  const before = words[at - 1];
  const start = before !== undefined && DETERMINERS.has(before[0].toLowerCase()) ? before : from;
  return text.slice(start.index);
}

const THIRD_PERSON: Record<string, string> = {
  "i'm": 'is',
  'i am': 'is',
  'i have': 'has',
  "i've": 'has',
  'i work': 'works',
  'i live': 'lives',
  'i prefer': 'prefers',
  'i use': 'uses',
  'i like': 'likes',
  'i love': 'loves',
  'i hate': 'hates',
  'i own': 'owns',
  'i speak': 'speaks',
  'i study': 'studies',
  'i was': 'was',
  i: 'they',
  my: 'their',
  me: 'them',
  mine: 'theirs',
  myself: 'themselves',
  your: 'my',
  yours: 'mine',
  you: 'me',
};
const PRONOUN =
  /\b(?:I['’]m|I am|I have|I['’]ve|I work|I live|I prefer|I use|I like|I love|I hate|I own|I speak|I study|I was|I|my|me|mine|myself|your|yours|you)\b/giu;

/** A crude first-to-third-person rewrite ("I'm allergic" → "is allergic", "my" → "their"). */
function thirdPerson(s: string): string {
  return s.replace(PRONOUN, (w) => THIRD_PERSON[w.toLowerCase().replace('’', "'")] ?? w);
}

function capText(s: string): string {
  const points = [...s];
  return points.length <= MAX_SCRIPTED_TEXT ? s : points.slice(0, MAX_SCRIPTED_TEXT).join('');
}
