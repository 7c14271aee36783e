/**
 * Typed attestation: what the quoted sentence does with the words a proposal claims. The quote is
 * real (the gate has checked it is in the cited user turn); this reads the sentence around it and
 * says whether the user states the claim in their own voice as fact (`asserted`, the only verdict
 * that counts as attested), asks or requests it (`presupposed`), hedges it (`hypothetical`),
 * denies it or says it is over (`negated`), says it of someone else (`other_holder`), shares words
 * without the relation (`paraphrase_unverified`), or shares nothing (`not_found`).
 *
 * Pure, deterministic code: word lists and sentence shapes, each documented with an example that
 * triggers it and a near-miss that does not (docs/ATTESTATION.md). A qualifier the claim keeps
 * ("The user is considering adopting a dog", "The user no longer lives in Oslo", "The user's wife
 * is a doctor") is not held against it: the claim then says what the quote says.
 */
import {
  contentTokens,
  locateQuote,
  normalizeForQuote,
  quoteFoundIn,
  stemToken,
  STOPWORDS,
} from './text-normalize.js';

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

// ---------------------------------------------------------------------------------------------
// Word lists. Each pattern runs on text folded by normalizeForQuote (lowercase, plain quotes).

/** Requests whose object the sentence takes for granted ("remind me when my passport expires"). */
const REQUEST =
  /^(?:(?:ok(?:ay)?|so|and|also|hey|hi|oh|quick question|one more thing)\s+)*(?:please\s+|pls\s+|can you\s+|could you\s+|would you\s+|will you\s+|can u\s+)?(?:remind|tell|show|find|check|look up|look into|search|confirm|verify|pull up|dig up|help me (?:\w+)|let me know|give me|list|fetch|double-check|double check|refresh my memory|recap|set (?:a|an|up a) (?:reminder|alarm|timer)|schedule|book|draft|write|send|email|text|go through|add|put|create|order|prepare|compose|work out|figure out|calculate|count|make(?! sure)|sort out|sort|organi[sz]e|arrange|buy|get me|look for|note down|translate|summari[sz]e|convert|compare|suggest|recommend|pick|choose|keep track of|track|log|update|renew|pay|ring|call|message|reply to|answer|ask)\b/u;

/** A sentence opened by a question word or an inverted auxiliary reads as a question. */
const QUESTION_OPENING =
  /^(?:(?:ok(?:ay)?|so|and|but|also|hey|oh|wait|um|hmm)\s+)*(?:(?:what|when|where|which|who|whom|whose|why|how)(?:'s|'re|'d)?\s+(?:do|does|did|is|are|was|were|have|has|had|will|would|can|could|should|am|much|many|long|often|old|far|about)\b|(?:do|does|did|is|are|was|were|am|have|has|had|will|would|can|could|should|shall)(?:n't)?\s+(?:i|you|we|my|me|it|there|that|this|he|she|they|the)\b|what about\b|any idea\b|remember when\b)/u;

/** A conditional frame, read over the whole sentence: "if I ever move to Berlin, …". */
const CONDITIONAL = /\b(?:if|unless|in case|whether|supposing|assuming)\b/u;

/** Hedges, modals and wishes, read in the clause that holds the claim's words. */
const HEDGE =
  /\b(?:maybe|perhaps|possibly|probably|likely|might|could|would|should|someday|some day|one day|eventually|hopefully|wish|wishes|wished|wishing|hope|hopes|hoping|hoped|imagine|imagines|imagined|imagining|suppose|supposes|dream|dreams|dreamed|dreamt|dreaming|considering|consider|considers|considered|thinking (?:about|of)|think about|planning|plan to|plans to|planned to|intend|intends|intended|intending|want to|wanna|wants to|wanted to|would like|i'd|we'd|not sure|unsure|not certain|no idea|i think|i guess|i believe|i suspect|i feel like|i reckon|i wonder|wondering|kind of|sort of|apparently|supposedly|allegedly|or so|ish|toying with|the idea of|tempted|on the fence|debating|mulling|weighing up|leaning towards|leaning toward|if possible|fingers crossed|in theory|ideally)\b/u;

/** "may" the modal, not the month ("in May", "May 3rd"). */
const MAY_MODAL =
  /(?<!\b(?:in|of|on|since|until|till|by|from|early|late|mid|last|next|this)\s)\bmay\b(?!\s+\d)/u;

/** Denials and states that are over, read in the clause that holds the claim's words. */
const NEGATION =
  /\b(?:not|no|never|none|nobody|nothing|neither|nor|without|cannot|no longer|anymore|any more|used to|formerly|former|previously|ex|(?:my|our) (?:old|previous|former) \w+|(?:my|our) last (?:job|company|employer|school|flat|apartment|house|place|team)|cant|dont|doesnt|didnt|wont|isnt|arent|wasnt|werent|havent|hasnt|hadnt|couldnt|wouldnt|shouldnt|aint|back when|these days no|(?:stopped|quit|quitting|gave up|give up|giving up|given up) \w+ing)\b|n't\b/u;

/**
 * Verbs that end a state, read only when one of the claim's words follows within three words:
 * "I quit the Tuesday book club" ends the membership; "I left work early and went to the gym"
 * ends nothing the claim "went to the gym" says.
 */
const CESSATION =
  /\b(?:quit|quitting|cancel(?:l)?ed|cancel(?:l)?ing|gave up(?: on)?|given up(?: on)?|give up(?: on)?|sold|left|dropped out of|dropped|moved out of|moved away from|retired from|resigned from|broke up with|divorced|ended|stopped|unsubscribed from|deleted|got rid of|cut out|ditched)\s+((?:\S+\s+){0,2}\S+)/gu;
const CESSATION_ONE = new RegExp(CESSATION.source, 'u');

const NEGATIONS = new RegExp(NEGATION.source, 'gu');

/** Lead-in hedges that are not a denial: "not sure", "don't know if". */
const HEDGED_NEGATIVE = /\b(?:not sure|not certain|no idea|don't know (?:if|whether)|dunno)\b/gu;

/** People and animals a sentence can be about instead of the user. */
const PERSON =
  'wife|husband|partner|boyfriend|girlfriend|fiance|fiancee|spouse|mom|mum|mother|mommy|mama|dad|father|daddy|papa|parents|parent|brother|sister|siblings|sibling|son|daughter|kids|kid|children|child|baby|toddler|grandma|grandmother|granny|grandpa|grandfather|grandparents|aunt|uncle|cousin|niece|nephew|friend|friends|bestie|colleague|colleagues|coworker|coworkers|co-worker|co-workers|boss|manager|team|teammate|roommate|flatmate|housemate|neighbour|neighbor|neighbours|neighbors|doctor|dentist|therapist|lawyer|accountant|landlord|landlady|teacher|tutor|coach|trainer|in-laws|family|ex|dog|cat|puppy|kitten|pet|horse|client|clients|students|student|nurse|vet|surgeon|physio|gp|mentor|classmate|stepmom|stepdad|stepson|stepdaughter|twin|dermatologist|optician|pharmacist|physician|specialist|consultant|advisor|adviser|mechanic|plumber|electrician|barber|hairdresser|priest|pastor|midwife|paediatrician|pediatrician|cardiologist|counsellor|counselor|psychiatrist|psychologist|nutritionist|dietitian|dietician|instructor|professor|supervisor|ceo|recruiter|cousins|uncles|aunts|nephews|nieces|brothers|sisters|sons|daughters|grandkids|grandson|granddaughter|fiancé|fiancée|wives|husbands|bosses|managers|doctors|nurses|teachers|chef|cook|barista|waiter|waitress|pilot|officer|sergeant|captain|editor|lecturer|principal|headteacher|headmaster|headmistress|dean|vicar|imam|rabbi|carer|caregiver|nanny|babysitter|cleaner|builder|contractor|tenant|lodger|mate|mates|pal|buddy|owner|founder|cofounder|co-founder|investor|customer|customers|patient|patients|intern|in-law|mother-in-law|father-in-law|sister-in-law|brother-in-law|son-in-law|daughter-in-law|everyone|everybody|people|someone|somebody|nobody';
const PERSON_NOUN = new RegExp(`\\b(?:${PERSON})\\b`, 'u');
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
const HOLDER_FRAME = new RegExp(
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
const USER_SUBJECT =
  /^(?:\w+\s+){0,3}?(?:i|i'm|i've|i'd|i'll|we|we're|we've|we'd|we'll|me and|my \w+ and i)\b/u;

/** Agent words a claim may use for the speaker the agent answers: not the user's content. */
const FRAME_TOKENS = new Set(['user', 'agent', 'assistant']);

// ---------------------------------------------------------------------------------------------
// The sentence around the quote.

interface Clause {
  /** Folded (normalizeForQuote). */
  folded: string;
  /** The original text, trimmed. */
  original: string;
  tokens: ReadonlySet<string>;
}

interface Sentence {
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
    tokens: new Set(lemmas(original)),
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
function sentencesAround(quote: string, turn: string): Sentence[] | null {
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

/**
 * Irregular forms, as the shared stemmer leaves them, mapped to one lemma here only (the recall
 * index keeps its own tokens): "said"/"say", "spent"/"spend", "coming"/"came".
 */
const LEMMA: Readonly<Record<string, string>> = {
  said: 'say',
  spent: 'spend',
  went: 'go',
  goe: 'go',
  gon: 'go',
  told: 'tell',
  bought: 'buy',
  made: 'mak',
  took: 'tak',
  taken: 'tak',
  ran: 'run',
  began: 'begin',
  begun: 'begin',
  cam: 'com',
  saw: 'see',
  seen: 'see',
  met: 'meet',
  paid: 'pay',
  sold: 'sell',
  taught: 'teach',
  thought: 'think',
  wrote: 'writ',
  written: 'writ',
  drove: 'driv',
  driven: 'driv',
  flew: 'fly',
  flown: 'fly',
  felt: 'feel',
  kept: 'keep',
  lost: 'los',
  won: 'win',
  found: 'find',
  gave: 'giv',
  given: 'giv',
  knew: 'know',
  known: 'know',
  spoke: 'speak',
  spoken: 'speak',
  ate: 'eat',
  eaten: 'eat',
  broke: 'break',
  broken: 'break',
  chose: 'choos',
  chosen: 'choos',
  grew: 'grow',
  grown: 'grow',
  sent: 'send',
  built: 'build',
  left: 'leav',
  leaving: 'leav',
  lent: 'lend',
  slept: 'sleep',
  swam: 'swim',
  wore: 'wear',
  worn: 'wear',
  born: 'bear',
  going: 'go',
  // a few words people use for each other's: "kids" and "children", "uni" and "university"
  kid: 'child',
  children: 'child',
  uni: 'university',
  jan: 'january',
  feb: 'february',
  mar: 'march',
  apr: 'april',
  jun: 'june',
  jul: 'july',
  aug: 'august',
  sep: 'september',
  sept: 'september',
  oct: 'october',
  nov: 'november',
  dec: 'december',
  one: '1',
  two: '2',
  three: '3',
  four: '4',
  fiv: '5',
  six: '6',
  seven: '7',
  eight: '8',
  nin: '9',
  ten: '10',
  eleven: '11',
  twelv: '12',
};

const lemma = (t: string): string => LEMMA[t] ?? t;

/** Words a faithful claim may add without saying more than the quote: "currently", "still". */
const TOLERATED = new Set([
  'current',
  'now',
  'still',
  'also',
  'longer',
  'today',
  'recent',
  // "two greyhounds, Pip and Moss" names them without the word
  'nam',
]);

interface ClaimReading {
  /** Content lemmas to find in the quote's sentence (the user/agent framing words left out). */
  tokens: string[];
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

function hedgedText(folded: string): boolean {
  return HEDGE.test(folded) || MAY_MODAL.test(folded) || CONDITIONAL.test(folded);
}

function negatedText(folded: string): boolean {
  const plain = folded.replace(HEDGED_NEGATIVE, ' ');
  return NEGATION.test(plain) || CESSATION_ONE.test(plain);
}

/** Lemmas of a text's content tokens (`contentTokens`, irregular forms mapped). */
function lemmas(text: string): string[] {
  return contentTokens(text).map(lemma);
}

const TOPIC = /\b(?:about|regarding|concerning|on the topic of|on the subject of)\b(.*)$/u;
const NEAR =
  /\b(?:near|nearby|next to|close to|closer to|outside|beside|behind|opposite|across from|across the (?:road|street|hall) from|down the (?:road|street) from|around the corner from|not far from|walking distance from|a few (?:doors|blocks|minutes) from)\b/u;
const PAST =
  /\b(?:was|were|used to|had been|back then|in the past|as a kid|as a child|when i was|for (?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|several|many|a few) (?:years?|months?|weeks?|decades?|days?))\b/u;
/** What is yet to come: a claim that states it as done or so says more than the quote. */
const FUTURE =
  /\b(?:will|'ll|going to|gonna|about to|soon|tomorrow|tonight|next (?:week|month|year|summer|spring|autumn|fall|winter|weekend|term|semester|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|in (?:a|an|one|two|three|four|five|six|\d+) (?:days?|weeks?|months?|years?)|(?:learning|trying|hoping|planning|getting ready|preparing) to|getting (?:married|divorced|engaged))\b/u;

/** A clause that opens with its verb: its subject is the sentence's ("Priya, who …, is allergic"). */
const VERB_FIRST =
  /^(?:who|which|is|was|are|were|has|had|have|does|did|lives|lived|works|worked|gets|got|loves|hates|owns|plays|runs|needs|wants|keeps|goes|went|takes|took|says|said|thinks)\b/u;

const PRESENT =
  /\b(?:is|are|am|has|have|does|do|lives|works|owns|plays|uses|goes|runs|eats|drinks|belongs|attends|keeps|stays|studies|teaches|drives|rides|wears|speaks|takes|volunteers|coaches|manages|leads|holds)\b/u;

function readClaim(claim: string): ClaimReading {
  const folded = normalizeForQuote(claim);
  const all = lemmas(claim).filter((t) => !FRAME_TOKENS.has(t));
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
function cite(s: string): string {
  const one = s.replace(/\s+/gu, ' ').trim();
  return `"${one.length > 80 ? `${one.slice(0, 77)}…` : one}"`;
}

function firstMatch(re: RegExp, s: string): string {
  return re.exec(s)?.[0].trim() ?? '';
}

/**
 * Whether the clause at `index` of a sentence asks or requests rather than states: it is at or
 * after the clause that opens a question ("do you think…", "am I…") or a request ("remind me…"),
 * or the sentence ends in "?" and opens neither (then all of it asks). A statement before the
 * question ("I'm allergic to peanuts, do you have a recipe?") still states; so does a clause
 * after a request that has its own first-person subject ("remind me tonight, I fly on Friday").
 */
function clauseAsks(s: Sentence, index: number): 'question' | 'request' | null {
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
function bareHedgeBefore(h: { sentence: Sentence; index: number }): boolean {
  const prev = h.sentence.clauses[h.index - 1];
  return prev !== undefined && bareHedge(prev);
}

/** A clause that is only a hedge ("Maybe", "I'm not sure") qualifies the clause after it. */
function bareHedge(c: Clause): boolean {
  return (hedgedText(c.folded) || /\bnot sure\b/u.test(c.folded)) && c.tokens.size <= 1;
}

/**
 * A clause that opens with a condition ("if I move to Berlin") qualifies the clause after it
 * when that clause is its consequence ("I'll need a new bank"), or when the condition has no
 * consequence of its own ("If the visa comes through, I start on March 1"); "if the weather holds
 * we'll cut silage friday, we've got 40 acres of grass down this year" states the acres.
 */
const CONSEQUENCE =
  /\b(?:will|would|could|might|can|should|must|shall|going to|gonna|then|have to|need to)\b|'ll\b|'d\b/u;
const CONDITION_OPENING = new RegExp(
  `^${OPENERS}(?:if|unless|in case|supposing|assuming|once|whenever)\\b`,
  'u',
);

function holderOf(c: Clause): string | null {
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

const PRONOUN = /^(?:he|she|they|you)$/u;

/** A clause that is only a name ("Priya, who sits next to me, is allergic …"). */
function bareName(c: Clause): string | null {
  const m = /^([A-Z][\p{Ll}]+)$/u.exec(c.original);
  return m?.[1] !== undefined && !NOT_A_NAME.has(m[1]) ? m[1].toLowerCase() : null;
}

/** A person word as one form: "kids" and "children" are one holder. */
const personForm = (w: string): string => lemma(stemToken(w));

function keepsHolder(reading: ClaimReading, holder: string): boolean {
  if (reading.names.has(holder)) return true;
  const form = personForm(holder);
  if ([...reading.persons].some((p) => personForm(p) === form)) return true;
  // a name of several words: the claim names one of them
  if (holder.includes(' ') && holder.split(' ').some((w) => reading.names.has(w))) return true;
  // "he/she/they": the claim names a person the pronoun can stand for (a place name cannot)
  return PRONOUN.test(holder) && reading.persons.size > 0;
}

interface Held {
  sentence: Sentence;
  clause: Clause;
  index: number;
}

/**
 * The fewest clauses that hold the claim's words: the clause with most of them first, then one
 * for each word still uncovered. "My cat Luna is 14 now, what should I feed a senior cat?" holds
 * "cat Luna 14" in its statement; the question's "cat" adds nothing and is not read.
 */
function heldClauses(sentences: readonly Sentence[], wanted: readonly string[]): Held[] {
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
const CORRECTION_FRAME =
  /^\s*(?:the user (?:corrected|told|reminded) (?:me|the agent|the assistant)|i was corrected(?: by the user)?)(?:\s*(?:that|about|on|:|,|-|\u2014))?\s*/iu;

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
        for (const w of s.folded.match(/[\p{L}\p{N}]+/gu) ?? []) words.add(lemma(stemToken(w)));
      }
      const absent = c.reading.functionStems.filter((t) => !words.has(t));
      if (absent.length === 0 || !c.reading.tokens.some((t) => c.have.has(t))) return null;
      return {
        verdict: 'paraphrase_unverified',
        reason: `the words overlap, but the quoted sentence does not say ${absent.map((t) => `"${t}"`).join(', ')}`,
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
        reason: `the words overlap, but the quoted sentence does not say ${unsaid
          .slice(0, 4)
          .map((t) => `"${t}"`)
          .join(', ')}`,
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
        const before = new Set(lemmas(h.clause.folded.slice(0, topic.index)));
        const inClause = c.found.filter((t) => h.clause.tokens.has(t));
        const onlyTopic = inClause.filter((t) => !before.has(t));
        if (onlyTopic.length > 0 && onlyTopic.length === inClause.length) {
          return {
            verdict: 'paraphrase_unverified',
            reason: `the quote names ${onlyTopic.map((t) => `"${t}"`).join(', ')} only as what something is "${topic[0].split(' ')[0]}", not as what the user does or is`,
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
      const after = new Set(lemmas(object));
      // the claim says the same word ("left-handed"): nothing is reported as over
      const verb = lemmas((x[0] ?? '').slice(0, (x[0] ?? '').length - (x[1] ?? '').length));
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

/** Words that start a new statement inside a clause: a denial after them is about that one. */
const CONNECTIVE = new Set(['so', 'and', 'which', 'then', 'because', 'but', 'while', 'whereas']);

/**
 * Whether a denial at `at` covers the claim's words: one of them follows it ("I don't eat
 * meat"), or it follows them with no connective between ("The apartment isn't mine anymore"); a
 * denial after a connective is about what follows it ("…in 2019 so gluten is a hard no").
 */
function denialCovers(text: string, at: number, found: readonly string[]): boolean {
  const after = new Set(lemmas(text.slice(at)));
  if (found.some((t) => after.has(t))) return true;
  const words = text
    .slice(0, at)
    .split(/\s+/u)
    .filter((w) => w !== '');
  for (let i = words.length - 1; i >= 0; i--) {
    const w = words[i] ?? '';
    if (CONNECTIVE.has(w)) return false;
    if (lemmas(w).some((t) => found.includes(t))) return true;
  }
  return false;
}

function frameHolder(frame: string): string {
  const person = PERSON_NOUN.exec(frame)?.[0];
  if (person !== undefined) return person;
  return (
    frame
      .trim()
      .replace(/^[,;]\s*/u, '')
      .split(/\s+/u)[0] ?? 'someone'
  );
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
