/**
 * How attestation reads English: the word lists and sentence shapes, the sentences and clauses
 * around a quote, what a claim says (its lemmas, its subject, whether it hedges, denies or looks
 * ahead), and who holds a clause. Pure. The rules that turn a reading into a verdict are in
 * attestation.ts (ATTESTATION_RULES); docs/ATTESTATION.md says what each pattern is for.
 */
import { contentTokens, formWords, STOPWORDS, wordForm } from './text/words.js';
import { locateQuote, normalizeForQuote } from './text/fold.js';

// ---------------------------------------------------------------------------------------------
// Word lists. Each pattern runs on text folded by normalizeForQuote (lowercase, plain quotes).

/** Requests whose object the sentence takes for granted ("remind me when my passport expires"). */
const REQUEST =
  /^(?:(?:ok(?:ay)?|so|and|also|hey|hi|oh|quick question|one more thing)\s+)*(?:please\s+|pls\s+|can you\s+|could you\s+|would you\s+|will you\s+|can u\s+)?(?:remind|tell|show|find|check|look up|look into|search|confirm|verify|pull up|dig up|help me (?:\w+)|let me know|give me|list|fetch|double-check|double check|refresh my memory|recap|set (?:a|an|up a) (?:reminder|alarm|timer)|schedule|book|draft|write|send|email|text|go through|add|put|create|order|prepare|compose|work out|figure out|calculate|count|make(?! sure)|sort out|sort|organi[sz]e|arrange|buy|get me|look for|note down|translate|summari[sz]e|convert|compare|suggest|recommend|pick|choose|keep track of|track|log|update|renew|pay|ring|call|message|reply to|answer|ask)\b/u;

/** A sentence opened by a question word or an inverted auxiliary reads as a question. */
const QUESTION_OPENING =
  /^(?:(?:ok(?:ay)?|so|and|but|also|hey|oh|wait|um|hmm)\s+)*(?:(?:what|when|where|which|who|whom|whose|why|how)(?:'s|'re|'d)?\s+(?:do|does|did|is|are|was|were|have|has|had|will|would|can|could|should|am|much|many|long|often|old|far|about)\b|(?:do|does|did|is|are|was|were|am|have|has|had|will|would|can|could|should|shall)(?:n't)?\s+(?:i|you|we|my|me|it|there|that|this|he|she|they|the)\b|what about\b|any idea\b|remember when\b)/u;

/** A conditional frame, read over the whole sentence: "if I ever move to Berlin, …". */
export const CONDITIONAL = /\b(?:if|unless|in case|whether|supposing|assuming)\b/u;

/** Hedges, modals and wishes, read in the clause that holds the claim's words. */
export const HEDGE =
  /\b(?:maybe|perhaps|possibly|probably|likely|might|could|would|should|someday|some day|one day|eventually|hopefully|wish|wishes|wished|wishing|hope|hopes|hoping|hoped|imagine|imagines|imagined|imagining|suppose|supposes|dream|dreams|dreamed|dreamt|dreaming|considering|consider|considers|considered|thinking (?:about|of)|think about|planning|plan to|plans to|planned to|intend|intends|intended|intending|want to|wanna|wants to|wanted to|would like|i'd|we'd|not sure|unsure|not certain|no idea|i think|i guess|i believe|i suspect|i feel like|i reckon|i wonder|wondering|kind of|sort of|apparently|supposedly|allegedly|or so|ish|toying with|the idea of|tempted|on the fence|debating|mulling|weighing up|leaning towards|leaning toward|if possible|fingers crossed|in theory|ideally)\b/u;

/** "may" the modal, not the month ("in May", "May 3rd"). */
export const MAY_MODAL =
  /(?<!\b(?:in|of|on|since|until|till|by|from|early|late|mid|last|next|this)\s)\bmay\b(?!\s+\d)/u;

/** Denials and states that are over, read in the clause that holds the claim's words. */
export const NEGATION =
  /\b(?:not|no|never|none|nobody|nothing|neither|nor|without|cannot|no longer|anymore|any more|used to|formerly|former|previously|ex|(?:my|our) (?:old|previous|former) \w+|(?:my|our) last (?:job|company|employer|school|flat|apartment|house|place|team)|cant|dont|doesnt|didnt|wont|isnt|arent|wasnt|werent|havent|hasnt|hadnt|couldnt|wouldnt|shouldnt|aint|back when|these days no|(?:stopped|quit|quitting|gave up|give up|giving up|given up) \w+ing)\b|n't\b/u;

/**
 * Verbs that end a state, read only when one of the claim's words follows within three words:
 * "I quit the Tuesday book club" ends the membership; "I left work early and went to the gym"
 * ends nothing the claim "went to the gym" says.
 */
export const CESSATION =
  /\b(?:quit|quitting|cancel(?:l)?ed|cancel(?:l)?ing|gave up(?: on)?|given up(?: on)?|give up(?: on)?|sold|left|dropped out of|dropped|moved out of|moved away from|retired from|resigned from|broke up with|divorced|ended|stopped|unsubscribed from|deleted|got rid of|cut out|ditched)\s+((?:\S+\s+){0,2}\S+)/gu;
export const CESSATION_ONE = new RegExp(CESSATION.source, 'u');

export const NEGATIONS = new RegExp(NEGATION.source, 'gu');

/** Lead-in hedges that are not a denial: "not sure", "don't know if". */
export const HEDGED_NEGATIVE =
  /\b(?:not sure|not certain|no idea|don't know (?:if|whether)|dunno)\b/gu;

/** People and animals a sentence can be about instead of the user. */
const PERSON =
  'wife|husband|partner|boyfriend|girlfriend|fiance|fiancee|spouse|mom|mum|mother|mommy|mama|dad|father|daddy|papa|parents|parent|brother|sister|siblings|sibling|son|daughter|kids|kid|children|child|baby|toddler|grandma|grandmother|granny|grandpa|grandfather|grandparents|aunt|uncle|cousin|niece|nephew|friend|friends|bestie|colleague|colleagues|coworker|coworkers|co-worker|co-workers|boss|manager|team|teammate|roommate|flatmate|housemate|neighbour|neighbor|neighbours|neighbors|doctor|dentist|therapist|lawyer|accountant|landlord|landlady|teacher|tutor|coach|trainer|in-laws|family|ex|dog|cat|puppy|kitten|pet|horse|client|clients|students|student|nurse|vet|surgeon|physio|gp|mentor|classmate|stepmom|stepdad|stepson|stepdaughter|twin|dermatologist|optician|pharmacist|physician|specialist|consultant|advisor|adviser|mechanic|plumber|electrician|barber|hairdresser|priest|pastor|midwife|paediatrician|pediatrician|cardiologist|counsellor|counselor|psychiatrist|psychologist|nutritionist|dietitian|dietician|instructor|professor|supervisor|ceo|recruiter|cousins|uncles|aunts|nephews|nieces|brothers|sisters|sons|daughters|grandkids|grandson|granddaughter|fiancé|fiancée|wives|husbands|bosses|managers|doctors|nurses|teachers|chef|cook|barista|waiter|waitress|pilot|officer|sergeant|captain|editor|lecturer|principal|headteacher|headmaster|headmistress|dean|vicar|imam|rabbi|carer|caregiver|nanny|babysitter|cleaner|builder|contractor|tenant|lodger|mate|mates|pal|buddy|owner|founder|cofounder|co-founder|investor|customer|customers|patient|patients|intern|in-law|mother-in-law|father-in-law|sister-in-law|brother-in-law|son-in-law|daughter-in-law|everyone|everybody|people|someone|somebody|nobody';
export const PERSON_NOUN = new RegExp(`\\b(?:${PERSON})\\b`, 'u');
const PERSON_NOUNS = new RegExp(PERSON_NOUN.source, 'gu');

/** Kin called by what they are, without "my": "Dad's convinced…", "Mum is a nurse". */
const BARE_KIN = '(?:dad|mum|mom|mother|father|mama|papa|nan|nana|grandma|grandpa|granny)';

/** Words a clause may open with before its subject. */
const OPENERS =
  '(?:(?:and|but|so|also|then|now|actually|well|oh|yes|yeah|no|nope|anyway|plus|btw|honestly|basically|today|yesterday|recently|lately|apparently|turns out|fyi|ok|okay|because|since|though|although|while|when|as)\\s+)*';

/** A clause whose subject is someone else: "my wife is …", "she lives …", "the doctor said …". */
const OTHER_SUBJECT = new RegExp(
  `^${OPENERS}(?:(?:both|all|half|some|one|two|three|each|most|many|several|none) (?:of )?)?(?:(?:my|our|the|a|his|her|their|[a-z]+'s)\\s+(?:\\w+\\s+)?(?:${PERSON})(?:-[a-z]+)?(?:'s)?\\b(?!\\s+and\\s+(?:i|me)\\b)|(?:he|she|they|hes|shes|theyre|theyve|you)(?:'s|'re|'d|'ll|'ve)?\\b|${BARE_KIN}(?:'s|\\s+(?:is|was|has|thinks|says|said|reckons|wants))\\b)`,
  'u',
);

/** Verbs that report what a holder thinks or says: what follows is the holder's, not the user's. */
const REPORTING =
  '(?:thinks?|thought|believes?|believed|says?|said|told|tells|wants?|wanted|reckons?|suggested|suggests|insists?|insisted|claims?|claimed|feels?|felt|worries|worried|mentioned|warned|advised|recommended|recommends|keeps saying|is convinced|was convinced|assumes?|assumed|swears?|swore|guesses|guessed|figures?|heard|hopes?|expects?|expected)';

/** "<holder> thinks / said / told me …", the holder not being the user. */
export const HOLDER_FRAME = new RegExp(
  `(?:^|[\\s,;])(?:(?:my|our|the|a|his|her|their|[a-z]+'s)\\s+(?:\\w+\\s+)?(?:${PERSON})(?:'s)?|(?:he|she|they|everyone|everybody|people|someone|somebody)|${BARE_KIN}(?:'s)?)\\s+(?:\\w+\\s+){0,2}(?:${REPORTING}|convinced|sure|certain)\\b`,
  'u',
);

/** A name in the original text, capitalised, before a verb: "Anna thinks …", "Tom lives …". */
const NAMED_SUBJECT =
  /^(?:(?:And|But|So|Also|Then|Now|Actually|Well|Oh|Yes|Yeah|Anyway|Plus|Btw|Honestly|Today|Yesterday|Apparently)\s+)*([A-Z][a-z]+(?:\s[A-Z][a-z]+)?)\s+(?:is|was|has|had|lives|lived|works|worked|thinks|thought|says|said|told|believes|wants|loves|hates|moved|got|keeps|reckons|insists|suggested|claims|feels|studies|plays|owns|drives|likes|needs)\b/u;

/** Capitalised words that open sentences and are not names. */
const NOT_A_NAME = new Set(
  'I We You Us Me Our Your Maybe Perhaps Please Remind Tell Today Yesterday Tomorrow Honestly Actually Also Quick Well So But And Oh Yes No Yeah Anyway Btw Just Still Now Then The My Our This That There It Everyone Nobody Someone Hey Hi Okay Ok Sorry Thanks Update Note Fyi Apparently Probably Definitely Really Work Life Home'.split(
    ' ',
  ),
);

/** First-person subjects in a clause: the user speaks for themselves (and for "we"). */
export const USER_SUBJECT =
  /^(?:\w+\s+){0,3}?(?:i|i'm|i've|i'd|i'll|we|we're|we've|we'd|we'll|me and|my \w+ and i)\b/u;

/** Agent words a claim may use for the speaker the agent answers: not the user's content. */
const FRAME_TOKENS = new Set(['user', 'agent', 'assistant'].map(wordForm));

// ---------------------------------------------------------------------------------------------
// The sentence around the quote.

interface Clause {
  /** Folded (normalizeForQuote). */
  folded: string;
  /** The original text, trimmed. */
  original: string;
  tokens: ReadonlySet<string>;
}

export interface Sentence {
  folded: string;
  clauses: Clause[];
}

const ABBREVIATIONS = /\b(?:dr|mr|mrs|ms|st|vs|etc|e\.g|i\.e|a\.m|p\.m|approx|no|jr|sr|prof)\.$/iu;

/** Splits text into sentences at . ! ? (kept) and line breaks; abbreviations do not end one. */
function splitSentences(text: string): Array<{ text: string; start: number }> {
  const out: Array<{ text: string; start: number }> = [];
  let start = 0;
  const boundary = /[.!?]+(?![.!?])(?=\s|$)|\n+/gu;
  for (const m of text.matchAll(boundary)) {
    const end = m.index + m[0].length;
    const piece = text.slice(start, end);
    if (m[0].startsWith('.') && ABBREVIATIONS.test(piece.trimEnd())) continue;
    if (piece.trim() !== '') out.push({ text: piece, start });
    start = end;
  }
  if (text.slice(start).trim() !== '') out.push({ text: text.slice(start), start });
  return out;
}

/** Clause boundaries inside a sentence: punctuation and contrastive or causal conjunctions. */
const CLAUSE_BOUNDARY =
  /\s*(?:[;()]|,(?!\d)|:(?!\d)|\s[-–—]\s|\s(?:but|although|though|whereas|because|however|except|while|and then|plus)\s|\sso\s(?=i\b)|\s(?:and|so)\s(?=(?:i'm|i've|i'd|i'll|we're|we've|we'd|we'll|he|she|they|it|it's|my|our|that|this|there)\b))\s*/iu;

function splitClauses(sentence: string): Clause[] {
  const parts = sentence
    .split(CLAUSE_BOUNDARY)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  // "me and my sister run the shop": the user is one of the subjects, so one clause
  for (let i = parts.length - 2; i >= 0; i--) {
    if (/^(?:me|i|myself)$/iu.test(parts[i] ?? '')) {
      parts.splice(i, 2, `${parts[i] ?? ''} and ${parts[i + 1] ?? ''}`);
    }
  }
  return parts.map((original) => ({
    original,
    folded: normalizeForQuote(original),
    tokens: new Set(contentTokens(original)),
  }));
}

/** The sentences of the turn that the quote spans (the quote alone when it cannot be placed). */
/** How much of the turn on each side of the quote is read for its sentence (characters). */
const WINDOW = 2000;

/**
 * The sentences of the turn that the quote spans, or null when the quote cannot be placed in the
 * turn. Both are composed (NFC) and their runs of whitespace made one space first, and only a
 * window around the quote is split, so a long turn costs no more than a short one.
 */
export function sentencesAround(quote: string, turn: string): Sentence[] | null {
  const plain = (t: string) =>
    t
      .normalize('NFC')
      .replace(/[^\S\n]+/gu, ' ')
      .replace(/\s*\n\s*/gu, '\n');
  const whole = plain(turn);
  const q = plain(quote).trim();
  const found = locateQuote(whole, q);
  if (found === null) return null;
  const from = Math.max(0, found.start - WINDOW);
  const text = whole.slice(from, found.end + WINDOW);
  const at = { start: found.start - from, end: found.end - from };
  const chosen = splitSentences(text).filter(
    (s) => s.start < at.end && s.start + s.text.length > at.start,
  );
  return chosen.map((s) => ({ folded: normalizeForQuote(s.text), clauses: splitClauses(s.text) }));
}

// ---------------------------------------------------------------------------------------------
// Reading the claim.

/** Words a faithful claim may add without saying more than the quote: "currently", "still". */
export const TOLERATED = new Set(
  // "two greyhounds, Pip and Moss" names them without the word "named"
  ['currently', 'now', 'still', 'also', 'longer', 'today', 'recently', 'named'].map(wordForm),
);

export interface ClaimReading {
  /** Content lemmas to find in the quote's sentence (the user/agent framing words left out). */
  tokens: string[];
  /** The claim's own word for each of its forms, to quote in a reason (`formWords`). */
  words: ReadonlyMap<string, string>;
  /** Stems that are function words ("owns" → "own"): found among every word of the quote. */
  functionStems: string[];
  hedged: boolean;
  negated: boolean;
  /** Person words the claim names (wife, brother, friends). */
  persons: ReadonlySet<string>;
  /** Capitalised names the claim holds (Anna, Auckland: a name is not known to be a person). */
  names: ReadonlySet<string>;
  /** The claim's subject is someone of the user's, not the user ("The user's sister drove…"). */
  otherSubject: string | null;
  /** The claim's subject is the user ("The user …", not "The user's sister …"). */
  userSubject: boolean;
  /** The claim says "about" itself (so a topic in the quote can be its object). */
  about: boolean;
  /** The claim says where only roughly itself ("near", "close to"). */
  near: boolean;
  /** The claim is in the past tense, or says it held for a time. */
  past: boolean;
  /** The claim says it is yet to come ("will", "next month", "plans to"). */
  future: boolean;
}

export function hedgedText(folded: string): boolean {
  return HEDGE.test(folded) || MAY_MODAL.test(folded) || CONDITIONAL.test(folded);
}

function negatedText(folded: string): boolean {
  const plain = folded.replace(HEDGED_NEGATIVE, ' ');
  return NEGATION.test(plain) || CESSATION_ONE.test(plain);
}

export const TOPIC = /\b(?:about|regarding|concerning|on the topic of|on the subject of)\b(.*)$/u;
export const NEAR =
  /\b(?:near|nearby|next to|close to|closer to|outside|beside|behind|opposite|across from|across the (?:road|street|hall) from|down the (?:road|street) from|around the corner from|not far from|walking distance from|a few (?:doors|blocks|minutes) from)\b/u;
export const PAST =
  /\b(?:was|were|used to|had been|back then|in the past|as a kid|as a child|when i was|for (?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|several|many|a few) (?:years?|months?|weeks?|decades?|days?))\b/u;
/** What is yet to come: a claim that states it as done or so says more than the quote. */
export const FUTURE =
  /\b(?:will|'ll|going to|gonna|about to|soon|tomorrow|tonight|next (?:week|month|year|summer|spring|autumn|fall|winter|weekend|term|semester|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|in (?:a|an|one|two|three|four|five|six|\d+) (?:days?|weeks?|months?|years?)|(?:learning|trying|hoping|planning|getting ready|preparing) to|getting (?:married|divorced|engaged))\b/u;

/** A clause that opens with its verb: its subject is the sentence's ("Priya, who …, is allergic"). */
export const VERB_FIRST =
  /^(?:who|which|is|was|are|were|has|had|have|does|did|lives|lived|works|worked|gets|got|loves|hates|owns|plays|runs|needs|wants|keeps|goes|went|takes|took|says|said|thinks)\b/u;

export const PRESENT =
  /\b(?:is|are|am|has|have|does|do|lives|works|owns|plays|uses|goes|runs|eats|drinks|belongs|attends|keeps|stays|studies|teaches|drives|rides|wears|speaks|takes|volunteers|coaches|manages|leads|holds)\b/u;

export function readClaim(claim: string): ClaimReading {
  const folded = normalizeForQuote(claim);
  const all = contentTokens(claim).filter((t) => !FRAME_TOKENS.has(t));
  const tokens = all.filter((t) => !STOPWORDS.has(t));
  // a stem that is itself a function word ("owns" → "own"), looked for among all the quote's words
  const functionStems = all.filter((t) => STOPWORDS.has(t));
  const persons = new Set<string>();
  for (const m of folded.matchAll(PERSON_NOUNS)) persons.add(m[0]);
  const names = new Set<string>();
  for (const m of claim.matchAll(/\b[A-Z][a-z]+\b/gu)) {
    if (m.index !== 0 && !NOT_A_NAME.has(m[0]) && m[0] !== 'User') names.add(m[0].toLowerCase());
  }
  const subject = /^(?:the )?user's (\w+)\b/u.exec(folded);
  const who = subject?.[1];
  return {
    tokens,
    words: formWords(claim),
    functionStems,
    hedged: hedgedText(folded),
    negated: negatedText(folded),
    persons,
    names,
    otherSubject: who !== undefined && PERSON_NOUN.test(who) ? who : null,
    userSubject: /^(?:the )?user\b(?!'s)/u.test(folded),
    about: TOPIC.test(folded),
    near: NEAR.test(folded),
    past: PAST.test(folded) || /\b\w+ed\b/u.test(folded),
    future: FUTURE.test(folded),
  };
}

// ---------------------------------------------------------------------------------------------

/** Quoted for a reason, shortened so one reason stays one line. */
export function cite(s: string): string {
  const one = s.replace(/\s+/gu, ' ').trim();
  return `"${one.length > 80 ? `${one.slice(0, 77)}…` : one}"`;
}

export function firstMatch(re: RegExp, s: string): string {
  return re.exec(s)?.[0].trim() ?? '';
}

/**
 * Whether the clause at `index` of a sentence asks or requests rather than states: it is at or
 * after the clause that opens a question ("do you think…", "am I…") or a request ("remind me…"),
 * or the sentence ends in "?" and opens neither (then all of it asks). A statement before the
 * question ("I'm allergic to peanuts, do you have a recipe?") still states; so does a clause
 * after a request that has its own first-person subject ("remind me tonight, I fly on Friday").
 */
export function clauseAsks(s: Sentence, index: number): 'question' | 'request' | null {
  let opened = -1;
  let kind: 'question' | 'request' | null = null;
  let later = false;
  s.clauses.forEach((c, i) => {
    const k = REQUEST.test(c.folded)
      ? 'request'
      : QUESTION_OPENING.test(c.folded)
        ? 'question'
        : null;
    if (k === null) return;
    if (i > index) later = true;
    else {
      opened = i;
      kind = k;
    }
  });
  const endsAsking = s.folded.trim().endsWith('?');
  if (kind === null) return endsAsking && !later ? 'question' : null;
  if (kind === 'request' && index > opened && !endsAsking) {
    const clause = s.clauses[index];
    if (clause !== undefined && USER_SUBJECT.test(clause.folded)) return null;
  }
  return kind;
}

/** Whether the clause before a held one is a bare hedge that qualifies it. */
export function bareHedgeBefore(h: { sentence: Sentence; index: number }): boolean {
  const prev = h.sentence.clauses[h.index - 1];
  return prev !== undefined && bareHedge(prev);
}

/** A clause that is only a hedge ("Maybe", "I'm not sure") qualifies the clause after it. */
export function bareHedge(c: Clause): boolean {
  return (hedgedText(c.folded) || /\bnot sure\b/u.test(c.folded)) && c.tokens.size <= 1;
}

/**
 * A clause that opens with a condition ("if I move to Berlin") qualifies the clause after it
 * when that clause is its consequence ("I'll need a new bank"), or when the condition has no
 * consequence of its own ("If the visa comes through, I start on March 1"); "if the weather holds
 * we'll cut silage friday, we've got 40 acres of grass down this year" states the acres.
 */
export const CONSEQUENCE =
  /\b(?:will|would|could|might|can|should|must|shall|going to|gonna|then|have to|need to)\b|'ll\b|'d\b/u;
export const CONDITION_OPENING = new RegExp(
  `^${OPENERS}(?:if|unless|in case|supposing|assuming|once|whenever)\\b`,
  'u',
);

export function holderOf(c: Clause): string | null {
  const m = OTHER_SUBJECT.exec(c.folded);
  if (m !== null) {
    const person = PERSON_NOUN.exec(m[0])?.[0];
    const pronoun = firstMatch(/\b(?:hes|shes|theyre|theyve|he|she|they|you)\b/u, m[0]);
    return person ?? (pronoun.replace(/^(he|she|they)(?:s|re|ve)$/u, '$1') || null);
  }
  const named = NAMED_SUBJECT.exec(c.original)?.[1];
  if (named !== undefined && !NOT_A_NAME.has(named.split(' ')[0] ?? '')) return named.toLowerCase();
  return null;
}

export const PRONOUN = /^(?:he|she|they|you)$/u;

/** A clause that is only a name ("Priya, who sits next to me, is allergic …"). */
export function bareName(c: Clause): string | null {
  const m = /^([A-Z][\p{Ll}]+)$/u.exec(c.original);
  return m?.[1] !== undefined && !NOT_A_NAME.has(m[1]) ? m[1].toLowerCase() : null;
}

/** A person word as one form: "kids" and "children" are one holder. */
export const personForm = (w: string): string => wordForm(w);

export function keepsHolder(reading: ClaimReading, holder: string): boolean {
  if (reading.names.has(holder)) return true;
  const form = personForm(holder);
  if ([...reading.persons].some((p) => personForm(p) === form)) return true;
  // a name of several words: the claim names one of them
  if (holder.includes(' ') && holder.split(' ').some((w) => reading.names.has(w))) return true;
  // "he/she/they": the claim names a person the pronoun can stand for (a place name cannot)
  return PRONOUN.test(holder) && reading.persons.size > 0;
}

export interface Held {
  sentence: Sentence;
  clause: Clause;
  index: number;
}

/**
 * The fewest clauses that hold the claim's words: the clause with most of them first, then one
 * for each word still uncovered. "My cat Luna is 14 now, what should I feed a senior cat?" holds
 * "cat Luna 14" in its statement; the question's "cat" adds nothing and is not read.
 */
export function heldClauses(sentences: readonly Sentence[], wanted: readonly string[]): Held[] {
  const all: Array<Held & { covers: string[] }> = [];
  for (const sentence of sentences) {
    sentence.clauses.forEach((clause, index) => {
      const covers = wanted.filter((t) => clause.tokens.has(t));
      if (covers.length > 0) all.push({ sentence, clause, index, covers });
    });
  }
  const left = new Set(wanted.filter((t) => all.some((h) => h.covers.includes(t))));
  const chosen: Held[] = [];
  while (left.size > 0) {
    let best: (typeof all)[number] | undefined;
    let bestCount = 0;
    for (const h of all) {
      const n = h.covers.filter((t) => left.has(t)).length;
      // on a tie, the clause the user is the subject of ("My partner's a welder and I'm a welder too")
      const better =
        n > bestCount ||
        (n === bestCount &&
          best !== undefined &&
          n > 0 &&
          !USER_SUBJECT.test(best.clause.folded) &&
          USER_SUBJECT.test(h.clause.folded));
      if (better) {
        best = h;
        bestCount = n;
      }
    }
    if (best === undefined) break;
    chosen.push(best);
    for (const t of best.covers) left.delete(t);
  }
  return chosen.sort(
    (x, y) => sentences.indexOf(x.sentence) - sentences.indexOf(y.sentence) || x.index - y.index,
  );
}

/**
 * A correction's framing ("The user corrected me: …"): the gate's correction rule checks that the
 * turn corrects; what the quote must say is what follows. (In a user_fact slot such a claim never
 * gets here: NOT_ABOUT_USER drops its "me" first.)
 */
export const CORRECTION_FRAME =
  /^\s*(?:the user (?:corrected|told|reminded) (?:me|the agent|the assistant)|i was corrected(?: by the user)?)(?:\s*(?:that|about|on|:|,|-|\u2014))?\s*/iu;

/** Words that start a new statement inside a clause: a denial after them is about that one. */
const CONNECTIVE = new Set(['so', 'and', 'which', 'then', 'because', 'but', 'while', 'whereas']);

/**
 * Whether a denial at `at` covers the claim's words: one of them follows it ("I don't eat
 * meat"), or it follows them with no connective between ("The apartment isn't mine anymore"); a
 * denial after a connective is about what follows it ("…in 2019 so gluten is a hard no").
 */
export function denialCovers(text: string, at: number, found: readonly string[]): boolean {
  const after = new Set(contentTokens(text.slice(at)));
  if (found.some((t) => after.has(t))) return true;
  const words = text
    .slice(0, at)
    .split(/\s+/u)
    .filter((w) => w !== '');
  for (let i = words.length - 1; i >= 0; i--) {
    const w = words[i] ?? '';
    if (CONNECTIVE.has(w)) return false;
    if (contentTokens(w).some((t) => found.includes(t))) return true;
  }
  return false;
}

export function frameHolder(frame: string): string {
  const person = PERSON_NOUN.exec(frame)?.[0];
  if (person !== undefined) return person;
  return (
    frame
      .trim()
      .replace(/^[,;]\s*/u, '')
      .split(/\s+/u)[0] ?? 'someone'
  );
}
