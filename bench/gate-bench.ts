/**
 * Gate benchmark: how many proposals the write gate judges per second, twice. First the pure
 * rules (`checkProposal` over proposals whose GateContexts were looked up in advance), then end
 * to end through `engine.propose` on each store, where every proposal costs its lookups and its
 * write (the fact row, or the dropped-log row). The workload is seed 001's night, at scale: a
 * 50-turn session (user and assistant) and batches of 100 reflection items, about a third of
 * which pass; the rest are dropped by the rules the seed's twelve lines and their neighbours
 * trip (self-cited, misquoted, uncorrected "corrections", "failed to recall" a topic nobody
 * raised, re-asserted retracted claims, …). The verdict mix is checked item by item against what
 * each item was built to hit, and the pure and store runs must agree on it, so neither figure can
 * come from a degenerate path. It reports; it never fails on a slow figure.
 * Usage: node dist/bench/gate-bench.js [--batches N] [--rounds R] [--pure-rounds R]
 * [--pure-warmup W] [--engines pglite,postgres] [--json]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { claimsFailure, referentTokens } from '../src/domain/gate-rules.js';
import { resetTextMemo } from '../src/domain/text-normalize.js';
import { readProposal } from '../src/gate/proposal-gate.js';
import {
  checkProposal,
  DEFAULT_CORRECTION_CUES,
  DEFAULT_FAILURE_CUES,
  DEFAULT_SLOTS,
  normalizeForQuote,
  type CitedTurn,
  type DropCode,
  type Engine,
  type GateContext,
  type HostReceiptReport,
  type Proposal,
  type ProposeResult,
} from '../src/index.js';
import { benchKinds, withBenchStore } from '../cli/bench/bench-store.js';

const KINDS = ['pglite', 'postgres'] as const;
type Kind = (typeof KINDS)[number];
/** Proposals per second the pure rules should sustain (issue 3). */
const TARGET = 20_000;
const SUBJECT = 'owner';
const SESSION = 'bench-night';
const BATCH_SIZE = 100;

// ---------------------------------------------------------------------------------------------
// The conversation: 25 user turns and 25 assistant replies, seq 1..50 (odd = user).

const NAMES = ['Maya', 'Tomas', 'Priya', 'Jonah', 'Ines', 'Kofi', 'Lena', 'Arjun', 'Sofia'];
const RELATIONS = ['sister', 'brother', 'cofounder', 'landlord', 'accountant', 'neighbour'];
const CITIES = ['Porto', 'Leeds', 'Osaka', 'Denver', 'Tallinn', 'Cork', 'Ghent', 'Quito', 'Perth'];
const EVENTS = [
  'a pottery class',
  'physio',
  'a standing call with the Osaka office',
  'choir practice',
  'a Spanish lesson',
  'a climbing session',
  'a budget review',
  'the school run',
  'a volunteer shift at the food bank',
];
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'];
const TIMES = ['7:30', '8:15', '9:00', '12:30', '13:45', '16:00', '17:30', '18:15', '19:00'];
const MONTHS = ['March', 'April', 'May', 'June', 'September', 'October'];
const PROJECTS = [
  'website redesign',
  'warehouse move',
  'podcast launch',
  'grant application',
  'Q3 hiring plan',
  'customer survey',
  'office fit-out',
  'newsletter relaunch',
  'data migration',
];
const SKILLS = [
  'Portuguese',
  'the cello',
  'watercolour',
  'Python',
  'bookkeeping',
  'sign language',
  'woodworking',
  'chess openings',
  'bread baking',
];
const AMOUNTS = ['$4,500', '$18,000', '$7,200', '$12,500', '$3,900', '$26,000', '$9,800'];
const PAYEES = [
  'Northwind Logistics',
  'Acme Print',
  'Blue Harbor Legal',
  'Kestrel IT',
  'Larchmont Catering',
  'Orbit Freight',
  'Sable Design',
  'Tern Analytics',
  'Umber Studio',
  'Vale Consulting',
];

/** [the user's words, the reflection's claim]: one per fact turn, for the `stances` slot. */
const STANCES: ReadonlyArray<readonly [string, string]> = [
  [
    'Keep your answers short, I read these on my phone.',
    'The user wants short answers, read on a phone',
  ],
  ['Please use metric units, I never think in miles.', 'The user prefers metric units to miles'],
  [
    'I would rather get an email than a phone call.',
    'The user would rather get an email than a call',
  ],
  [
    'Put the conclusion first, then the details.',
    'The user wants the conclusion first, then details',
  ],
  ['Plain text is fine, skip the emoji.', 'The user prefers plain text without emoji'],
  [
    'Bullet points beat long paragraphs for me.',
    'The user prefers bullet points to long paragraphs',
  ],
  ['Morning meetings work best for me, before ten.', 'The user prefers meetings in the morning'],
  ['Round numbers are fine, I do not need the cents.', 'The user is fine with rounded figures'],
  [
    'When you are unsure, say so instead of guessing.',
    'The user wants uncertainty said, not guessed',
  ],
  ['Use 24-hour times, please.', 'The user prefers 24-hour times'],
  ['Ask before you book anything on my calendar.', 'The user wants to be asked before bookings'],
  ['I like drafts I can edit rather than finished text.', 'The user prefers editable drafts'],
  ['Spell out acronyms the first time, my team is new.', 'The user wants acronyms spelled out'],
  ['Keep the tone friendly but not chatty.', 'The user wants a friendly but not chatty tone'],
];

const OPENERS = [
  'Morning! A few things before the week gets busy.',
  'Quick update from my side.',
  'Okay, some housekeeping first.',
  'Back from lunch, a couple of notes for you.',
  'Before I forget the details, here is what changed.',
  'Short one today, I am between calls.',
  'Some context for the planning we are doing.',
];
/** Asides that make every other fact turn long, as real turns run on. */
const ASIDES = [
  'The last two weeks have been a blur of travel and handovers, so I am writing things down ' +
    'as they come and trusting you to keep them straight while I catch up on sleep.',
  'I spent most of yesterday on the phone with the printers and the courier, and I would ' +
    'rather not repeat that, so anything you can batch into one message saves me real time.',
  'My inbox is a mess after the conference; if something looks urgent to you, flag it at the ' +
    'top of your answer and leave the rest for the weekly summary on Friday afternoon.',
  'The team is split across three time zones this month, which means half my evenings go to ' +
    'calls, so please keep anything that needs a decision from me short and clearly marked.',
];
const REQUESTS = [
  'Can you draft a two-line note to the team about the schedule for this week?',
  'Could you put together a checklist for Friday so nothing slips?',
  'What should I prepare for the review on Thursday, in order of urgency?',
  'Please summarise where the open items stand, one line each.',
  'Can you suggest a time for a 30-minute catch-up with the design folks?',
  'Draft a polite reply to the accountant asking for the updated invoice, please.',
  'What is the smallest next step I can take on the planning today?',
];

/**
 * Sentences that a reflection could turn into claims the bench stores as retracted: the user's
 * words, a quote from them, the retracted claim, and re-assertions of it.
 */
const BAITS: ReadonlyArray<{
  sentence: string;
  quote: string;
  retracted: string;
  again: string[];
}> = [
  {
    sentence: 'I booked the vegetarian tasting menu for the team dinner on the 14th.',
    quote: 'the vegetarian tasting menu',
    retracted: 'The user is vegetarian',
    again: ['The user is a vegetarian', 'User is vegetarian.'],
  },
  {
    sentence: 'Dana Whitfield from finance sent the forecast this morning.',
    quote: 'Dana Whitfield from finance',
    retracted: "The user's manager is Dana Whitfield",
    again: ["Dana Whitfield is the user's manager", "The user's manager is Dana Whitfield."],
  },
  {
    sentence: 'My friend Rui is moving to Lisbon in the spring.',
    quote: 'moving to Lisbon in the spring',
    retracted: 'The user is moving to Lisbon in the spring',
    again: ['The user is moving to Lisbon this spring', 'User moving to Lisbon in spring'],
  },
];

/** Topics the user asks about once, never having raised them before (seed 001's plants). */
const PLANTED = [
  {
    topic: 'vendor contract',
    text:
      'Remind me what we decided last week about the vendor contract. I want to bring it up ' +
      'with Sam tomorrow morning and I would like the numbers straight before the call, ' +
      'including whatever we said about the renewal terms and the notice period.',
  },
  {
    topic: "cousin's business",
    text:
      "You sent me a message earlier about my cousin's business that I never replied to. " +
      'Can you pull it up? I think it had a question about the shop hours in it, and maybe ' +
      'something about the delivery van as well.',
  },
  {
    topic: 'Berlin lease',
    text:
      'What did we agree about the Berlin lease? The landlord’s agent is calling this ' +
      'afternoon and I need the figure we settled on, plus the date we said we would sign by. ' +
      'If there was a draft of the email, paste it here so I can read it on the way.',
  },
];

// prettier-ignore
const USER_LAYOUT = [
  'fact', 'fact', 'fact', 'fact', 'fact', 'fact', 'correction', 'fact',
  'fact', 'host', 'planted', 'fact', 'correction', 'fact', 'fact', 'planted',
  'fact', 'correction', 'recall', 'host', 'fact', 'planted', 'correction', 'recall',
  'fact',
] as const;

interface TurnSpec {
  seq: number;
  role: 'user' | 'assistant';
  content: string;
  corrective: boolean;
  receipt?: HostReceiptReport;
}

/** A quotable sentence in a user turn and what a reflection would make of it. */
interface Quoted {
  seq: number;
  quote: string;
  claim: string;
}

interface Conversation {
  turns: TurnSpec[];
  facts: Quoted[];
  stances: Quoted[];
  corrections: Quoted[];
  hostCorrections: Quoted[];
  recalls: Quoted[];
  planted: Array<Quoted & { topic: string }>;
  baits: Array<Quoted & { again: string[] }>;
  replies: Quoted[];
  retracted: string[];
}

function item<T>(list: readonly T[], i: number): T {
  const v = list[i % list.length];
  if (v === undefined) throw new Error(`empty list at ${i}`);
  return v;
}

const unstop = (s: string): string => s.replace(/[.!?]$/u, '');
const lowerFirst = (s: string): string => `${s.charAt(0).toLowerCase()}${s.slice(1)}`;
const firstSentence = (s: string): string => s.split(/(?<=[.?!])\s/u)[0] ?? s;

/** Fact k: five kinds, each with distinct values; [the user's sentence, the claim]. */
function fact(k: number): [string, string] {
  const j = Math.floor(k / 5);
  switch (k % 5) {
    case 0: {
      const [rel, name, city] = [item(RELATIONS, j), item(NAMES, j), item(CITIES, j)];
      return [`My ${rel} ${name} lives in ${city}.`, `The user's ${rel} ${name} lives in ${city}`];
    }
    case 1: {
      const [event, day, time] = [item(EVENTS, j), item(WEEKDAYS, j), item(TIMES, j)];
      return [
        `I have ${event} every ${day} at ${time}.`,
        `The user has ${event} every ${day} at ${time}`,
      ];
    }
    case 2: {
      const [project, month, day] = [item(PROJECTS, j), item(MONTHS, j), ((j * 3) % 27) + 1];
      return [
        `We moved the ${project} deadline to ${month} ${day}.`,
        `The ${project} deadline moved to ${month} ${day}`,
      ];
    }
    case 3: {
      const skill = item(SKILLS, j);
      return [
        `I've been learning ${skill} for ${j + 2} months now.`,
        `The user has been learning ${skill} for ${j + 2} months`,
      ];
    }
    default: {
      const [project, amount] = [item(PROJECTS, j + 4), item(AMOUNTS, j)];
      return [
        `The budget for the ${project} is ${amount} this quarter.`,
        `The ${project} budget is ${amount} this quarter`,
      ];
    }
  }
}

function buildConversation(): Conversation {
  const conv: Conversation = {
    turns: [],
    facts: [],
    stances: [],
    corrections: [],
    hostCorrections: [],
    recalls: [],
    planted: [],
    baits: [],
    replies: [],
    retracted: BAITS.map((b) => b.retracted),
  };
  const budgets: Array<{ project: string; amount: string }> = [];
  let factTurn = 0;
  let correction = 0;
  let host = 0;
  let planted = 0;
  let recall = 0;
  USER_LAYOUT.forEach((kind, u) => {
    const seq = 2 * u + 1;
    let content: string;
    let reply: string;
    let corrective = false;
    if (kind === 'fact') {
      const f = factTurn++;
      const sentences = [0, 1, 2].map((i) => fact(3 * f + i));
      const [stance, stanceClaim] = item(STANCES, f);
      const bait = [4, 7, 11].includes(u) ? BAITS[[4, 7, 11].indexOf(u)] : undefined;
      content = [
        item(OPENERS, f),
        ...sentences.map(([s]) => s),
        ...(bait === undefined ? [] : [bait.sentence]),
        stance,
        ...(f % 2 === 0 ? [item(ASIDES, f / 2)] : []),
        item(REQUESTS, f),
      ].join(' ');
      for (const [sentence, claim] of sentences) {
        conv.facts.push({ seq, quote: unstop(sentence), claim });
        const budget = /^The budget for the (.+) is (\S+) this quarter\.$/u.exec(sentence);
        if (budget?.[1] !== undefined && budget[2] !== undefined) {
          budgets.push({ project: budget[1], amount: budget[2] });
        }
      }
      conv.stances.push({ seq, quote: unstop(stance), claim: stanceClaim });
      if (bait !== undefined)
        conv.baits.push({ seq, quote: bait.quote, claim: bait.retracted, again: bait.again });
      const [first] = item(sentences, 0);
      reply =
        `Noted: ${lowerFirst(unstop(first))}. I have added it to the notes for this week. ` +
        `Here is a draft you can send as is: "Hi all, a quick update on the schedule. Nothing ` +
        `changes for the team today; I will share the full plan on Friday." Tell me if you ` +
        `want it shorter or more formal.`;
    } else if (kind === 'correction') {
      const c = correction++;
      const project = item(PROJECTS, c + 2);
      const [was, now] = [`${item(MONTHS, c)} ${c + 10}`, `${item(MONTHS, c + 1)} ${c + 3}`];
      const quote = `No, that's wrong: the ${project} deadline is ${now}, not ${was}`;
      content =
        `${quote}. I told you that on Monday and it is already in the shared calendar. Please ` +
        `fix it in the plan, and check whether anything else still points at the old date ` +
        `before we send the update to the team.`;
      conv.corrections.push({
        seq,
        quote,
        claim: `Correction from the user: the ${project} deadline is ${now}, not ${was}`,
      });
      reply =
        `You're right, I had the ${project} deadline as ${was}. I have moved it to ${now} in ` +
        `the plan and checked the other items: the review and the handover still point at ` +
        `the old date, so I moved them with it. Want me to tell the team?`;
    } else if (kind === 'host') {
      const h = host++;
      const city = item(CITIES, h + 5);
      const quote =
        h === 0
          ? `The deposit goes to the ${city} account now`
          : `The standup is at 9:45 from next week`;
      content =
        `${quote}, the old details are out of date. I changed it this week and only told ` +
        `a few people, so please update the payment note and the reminders, and keep the ` +
        `reference number exactly as it was.`;
      corrective = true;
      conv.hostCorrections.push({
        seq,
        quote,
        claim: `The user corrected me: ${lowerFirst(quote)}`,
      });
      reply =
        `Thanks, updated. ${quote}; I changed the payment note and the two reminders that ` +
        `used the old details, and kept the reference number as it was.`;
    } else if (kind === 'planted') {
      const plant = item(PLANTED, planted++);
      content = plant.text;
      const first = firstSentence(plant.text);
      conv.planted.push({ seq, quote: unstop(first), claim: '', topic: plant.topic });
      reply =
        `I don't have any record of a conversation about the ${plant.topic}. It isn't in this ` +
        `session or in the earlier turns I can see, and I won't fill it in with a guess. Do ` +
        `you remember roughly when we talked about it, or who else was on the thread? That ` +
        `might help me find it if it is somewhere else.`;
    } else {
      // A question about budgets given earlier: "I lost track of" them is a claim with a referent.
      const r = recall++;
      const [a, b] = [item(budgets, 2 * r), item(budgets, 2 * r + 1)];
      const [qa, qb] = [
        `what was the budget for the ${a.project} again`,
        `remind me of the ${b.project} budget too`,
      ];
      content =
        `Quick check before I send the update: ${qa}? And ${qb}, I think it changed after the ` +
        `review. I would like both figures in one line so I can paste them into the slides.`;
      for (const [quote, project] of [
        [qa, a.project],
        [qb, b.project],
      ] as const) {
        conv.recalls.push({
          seq,
          quote,
          claim: `I lost track of the ${project} budget the user had given me earlier`,
        });
      }
      reply =
        `The ${a.project} budget you gave me is ${a.amount} this quarter. For the ${b.project}, ` +
        `the figure I have is ${b.amount}; tell me if it changed after the review and I will ` +
        `update the slide line.`;
    }
    conv.turns.push({ seq, role: 'user', content, corrective });
    const receipt: HostReceiptReport =
      u % 3 === 2 ? { tools: ['calendar.search'] } : { noTools: true };
    conv.turns.push({
      seq: seq + 1,
      role: 'assistant',
      content: reply,
      corrective: false,
      receipt,
    });
    conv.replies.push({ seq: seq + 1, quote: unstop(firstSentence(reply)), claim: '' });
  });
  return conv;
}

// ---------------------------------------------------------------------------------------------
// The reflection's batches: a fixed mix of 100 items, each built to hit one code (or to pass).

/** What an item was built to do: pass (`ok`) or be dropped with a given code. */
type Expect = 'ok' | DropCode;

const MIX: ReadonlyArray<readonly [name: string, count: number, expect: Expect]> = [
  ['user fact, quoted', 18, 'ok'],
  ['stance, quoted', 6, 'ok'],
  ['correction, cue in quote', 3, 'ok'],
  ['correction, host-marked turn', 1, 'ok'],
  ['real but unrelated quote', 3, 'ok'],
  ['failed to recall, topic was raised', 3, 'ok'],
  ['failed to recall, topic never raised', 12, 'ABSENT_REFERENT'],
  ['quote not in the turn', 9, 'QUOTE_NOT_FOUND'],
  ['re-asserts a retracted claim', 6, 'RETRACTED_CLAIM'],
  ["cites the agent's own reply", 8, 'EVIDENCE_NOT_USER_TURN'],
  ['correction that corrects nothing', 8, 'NO_CORRECTION_EVENT'],
  ['no evidence', 8, 'NO_EVIDENCE'],
  ['turn not in the record', 4, 'TURN_NOT_FOUND'],
  ['undeclared slot', 4, 'UNKNOWN_SLOT'],
  ['"did" outside an action slot', 2, 'ORIGIN_MISMATCH'],
  ['unknown origin', 2, 'INVALID_PROPOSAL'],
  ['same text again in the batch', 3, 'DUPLICATE'],
];

/** Wrappers that make each use of a claim a new text, as one night's wording differs from the last. */
const FRAMES: ReadonlyArray<(s: string) => string> = [
  (s) => `${s}.`,
  (s) => `Noted from chat: ${lowerFirst(s)}.`,
  (s) => `${s}, in the user's own words.`,
  (s) => `${s} (stated by the user).`,
  (s) => `Worth remembering: ${lowerFirst(s)}.`,
  (s) => `${s}; the user said so directly.`,
  (s) => `From today's conversation: ${lowerFirst(s)}.`,
  (s) => `${s}, as the user put it.`,
  (s) => `Keep in mind: ${lowerFirst(s)}.`,
  (s) => `${s} (mentioned in passing).`,
];

interface BenchItem {
  kind: string;
  expect: Expect;
  raw: Record<string, unknown>;
}

/** The n-th fresh text from a pool of claims: each claim in each frame once, then no more. */
function fresh(pool: readonly string[], n: number, what: string): string {
  const frame = FRAMES[Math.floor(n / pool.length)];
  if (frame === undefined) {
    throw new Error(`ran out of fresh "${what}" texts at item ${n}: use fewer --batches`);
  }
  return frame(item(pool, n));
}

function evidence(q: { seq: number; quote: string }): { turn: number; quote: string } {
  return { turn: q.seq, quote: q.quote };
}

/** One item of a kind; `n` counts the items of that kind over the whole run (fresh texts). */
function makeItem(conv: Conversation, kind: string, n: number): Record<string, unknown> {
  const what = 'what_i_know_about_user';
  const factClaims = conv.facts.map((f) => f.claim);
  const plant = item(conv.planted, n);
  switch (kind) {
    case 'user fact, quoted': {
      const f = item(conv.facts, n);
      return { slot: what, origin: 'saw', text: fresh(factClaims, n, kind), evidence: evidence(f) };
    }
    case 'stance, quoted': {
      const s = item(conv.stances, n);
      const text = fresh(
        conv.stances.map((x) => x.claim),
        n,
        kind,
      );
      return { slot: 'stances', origin: 'inferred', text, evidence: evidence(s) };
    }
    case 'correction, cue in quote': {
      const c = item(conv.corrections, n);
      const text = fresh(
        conv.corrections.map((x) => x.claim),
        n,
        kind,
      );
      return { slot: 'corrections_received', origin: 'saw', text, evidence: evidence(c) };
    }
    case 'correction, host-marked turn': {
      const c = item(conv.hostCorrections, n);
      const text = fresh(
        conv.hostCorrections.map((x) => x.claim),
        n,
        kind,
      );
      return { slot: 'corrections_received', origin: 'saw', text, evidence: evidence(c) };
    }
    case 'real but unrelated quote': {
      // Seed 001's "the user authorized wire transfers": a real quote, proving nothing it says.
      const s = item(conv.stances, n);
      const claims = PAYEES.map(
        (p, i) => `The user authorized wire transfers of up to ${item(AMOUNTS, i)} to ${p}`,
      );
      return {
        slot: what,
        origin: 'inferred',
        text: fresh(claims, n, kind),
        evidence: evidence(s),
      };
    }
    case 'failed to recall, topic was raised': {
      const r = item(conv.recalls, n);
      const text = fresh(
        conv.recalls.map((x) => x.claim),
        n,
        kind,
      );
      return { slot: what, origin: 'inferred', text, evidence: evidence(r) };
    }
    case 'failed to recall, topic never raised': {
      const t = plant.topic;
      const texts = [
        `The user recently asked about the ${t}, a conversation I failed to recall.`,
        `I failed to recall the user's question about the ${t}, highlighting a discrepancy between my records and his memory.`,
        `I never replied to a message the user sent about the ${t}.`,
        `I failed to validate the user's memory and acknowledge the significance of those gaps.`,
      ];
      const slot = n % 2 === 0 ? what : 'stances';
      return {
        slot,
        origin: 'inferred',
        text: item(texts, Math.floor(n / 3)),
        evidence: evidence(plant),
      };
    }
    case 'quote not in the turn': {
      const f = item(conv.facts, n * 7);
      const other = item(conv.facts, n * 7 + 3);
      const quotes = [
        // a paraphrase, a changed value, and a real quote from another turn
        {
          turn: plant.seq,
          quote: `what we agreed about the ${plant.topic.split(' ')[0] ?? ''} deal`,
        },
        {
          turn: f.seq,
          quote: f.quote.replace(/\d+|[A-Z][a-z]+$/u, (m) =>
            /\d/u.test(m) ? `${Number(m) + 1}` : 'Madrid',
          ),
        },
        { turn: f.seq, quote: other.seq === f.seq ? `${f.quote} as agreed` : other.quote },
      ];
      return { slot: what, origin: 'saw', text: `${f.claim}.`, evidence: item(quotes, n) };
    }
    case 're-asserts a retracted claim': {
      const b = item(conv.baits, n);
      return {
        slot: what,
        origin: 'inferred',
        text: item(b.again, Math.floor(n / 3)),
        evidence: evidence(b),
      };
    }
    case "cites the agent's own reply": {
      const r = item(conv.replies, n * 5);
      const texts = [
        `The user recently asked about the ${plant.topic}, a conversation I failed to recall.`,
        `${item(factClaims, n)}.`,
      ];
      return { slot: what, origin: 'saw', text: item(texts, n), evidence: evidence(r) };
    }
    case 'correction that corrects nothing': {
      const f = item(conv.facts, n * 3);
      const options = [
        {
          text: `I was corrected for missing an opportunity to acknowledge the deeper pattern when my records didn't align with the user's recollection about the ${plant.topic}.`,
          evidence: evidence(plant),
        },
        {
          text: `I was corrected for failing to recall the user's recent question about the ${plant.topic}, directly validating his memory over my records.`,
          evidence: evidence(plant),
        },
        { text: `Correction: ${lowerFirst(f.claim)}.`, evidence: evidence(f) },
      ];
      return { slot: 'corrections_received', origin: 'inferred', ...item(options, n) };
    }
    case 'no evidence': {
      const text = `I failed to validate the user's memory and acknowledge the significance of those gaps.`;
      return n % 2 === 0
        ? { slot: 'corrections_received', origin: 'inferred', text }
        : {
            slot: what,
            origin: 'saw',
            text: `${item(factClaims, n)}.`,
            evidence: { quote: 'as discussed' },
          };
    }
    case 'turn not in the record': {
      const f = item(conv.facts, n);
      return {
        slot: what,
        origin: 'saw',
        text: `${f.claim}.`,
        evidence: { turn: 51 + (n % 40), quote: f.quote },
      };
    }
    case 'undeclared slot': {
      const f = item(conv.facts, n);
      const slot = n % 2 === 0 ? 'patterns_noticed' : 'commitments';
      return { slot, origin: 'inferred', text: `${f.claim}.`, evidence: evidence(f) };
    }
    case '"did" outside an action slot': {
      const f = item(conv.facts, n);
      return { slot: what, origin: 'did', text: `${f.claim}.`, evidence: evidence(f) };
    }
    case 'unknown origin': {
      const f = item(conv.facts, n);
      return { slot: what, origin: 'guessed', text: `${f.claim}.`, evidence: evidence(f) };
    }
    default:
      throw new Error(`no generator for "${kind}"`);
  }
}

/** Deterministic shuffle (mulberry32), so every run checks the same sequence. */
function shuffled<T>(list: readonly T[], seed: number): T[] {
  let s = seed >>> 0;
  const rnd = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** Batch `b` (0 = warm-up): the mix, shuffled, with the duplicates of its first passes last. */
function makeBatch(conv: Conversation, b: number): BenchItem[] {
  const items: BenchItem[] = [];
  for (const [kind, count, expect] of MIX) {
    if (expect === 'DUPLICATE') continue;
    for (let i = 0; i < count; i++) {
      items.push({ kind, expect, raw: makeItem(conv, kind, b * count + i) });
    }
  }
  const batch = shuffled(items, 0x9e3779b9 ^ b);
  const duplicates = MIX.find(([, , e]) => e === 'DUPLICATE')?.[1] ?? 0;
  const firstPasses = batch.filter((x) => x.kind === 'user fact, quoted').slice(0, duplicates);
  for (const original of firstPasses) {
    batch.push({
      kind: 'same text again in the batch',
      expect: 'DUPLICATE',
      raw: { ...original.raw },
    });
  }
  if (batch.length !== BATCH_SIZE) throw new Error(`batch of ${batch.length}, not ${BATCH_SIZE}`);
  return batch;
}

// ---------------------------------------------------------------------------------------------
// Pure rules: the contexts ProposalGate would look up, computed ahead from the same conversation.

const BASE_TIME = Date.parse('2026-10-31T19:00:00Z');

interface PureItem extends BenchItem {
  batch: number;
  proposal: Proposal;
  ctx: GateContext;
  verdict: Expect;
  attested: boolean;
}

/**
 * Mirrors ProposalGate.propose over an in-memory store: the cited turn by seq, the declared
 * slots, the retracted claims, the slot's live-or-pending texts (normalized, growing as items
 * pass), and the earlier turns the SQL pre-filter would return for a failure claim.
 */
function prepareContexts(conv: Conversation, batches: readonly BenchItem[][]): PureItem[] {
  const slots = new Map(DEFAULT_SLOTS.map((s) => [s.name, s]));
  const turns = new Map<number, CitedTurn>(
    conv.turns.map((t) => [
      t.seq,
      {
        id: `turn-${t.seq}`,
        seq: t.seq,
        sessionId: SESSION,
        role: t.role,
        content: t.content,
        corrective: t.corrective,
        receiptTools: t.receipt?.tools ?? [],
        recordedAt: new Date(BASE_TIME + t.seq * 60_000),
      },
    ]),
  );
  const retractedAt = new Date(BASE_TIME + (conv.turns.length + 60) * 60_000);
  const retractedClaims = conv.retracted.map((text) => ({ text, retractedAt }));
  const pending = new Map<string, string[]>();
  const out: PureItem[] = [];
  batches.forEach((batch, b) => {
    for (const it of batch) {
      const read = readProposal(it.raw);
      const proposal = 'proposal' in read ? read.proposal : (it.raw as unknown as Proposal);
      const turnSeq = proposal.evidence?.turn;
      const cited = turnSeq === undefined ? null : (turns.get(turnSeq) ?? null);
      let earlier: string[] = [];
      if (cited !== null && claimsFailure(proposal.text, DEFAULT_FAILURE_CUES)) {
        const tokens = referentTokens(proposal.text, DEFAULT_FAILURE_CUES);
        if (tokens.length > 0) {
          // GateTurnSql.earlierMentions: earlier non-assistant turns matching any token (ILIKE).
          earlier = conv.turns
            .filter((t) => t.seq < cited.seq && t.role !== 'assistant')
            .filter((t) => tokens.some((tok) => t.content.toLowerCase().includes(tok)))
            .reverse()
            .slice(0, 200)
            .map((t) => t.content);
        }
      }
      const texts = pending.get(proposal.slot) ?? [];
      pending.set(proposal.slot, texts);
      const ctx: GateContext = {
        slot: slots.get(proposal.slot) ?? null,
        citedTurn: cited,
        correctionCues: DEFAULT_CORRECTION_CUES,
        failureCues: DEFAULT_FAILURE_CUES,
        earlierTurnTexts: earlier,
        retractedClaims,
        liveOrPendingTexts: [...texts],
      };
      const v = checkProposal(proposal, ctx);
      // What the store would do with a raw item readProposal rejects, the rules do the same.
      const verdict = !('proposal' in read) ? 'INVALID_PROPOSAL' : v.ok ? 'ok' : v.code;
      if (v.ok && 'proposal' in read) texts.push(normalizeForQuote(proposal.text));
      out.push({ ...it, batch: b, proposal, ctx, verdict, attested: v.ok && v.attested });
    }
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Timing helpers.

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
};
const percentile = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN;
};

interface PureResult {
  proposals: number;
  rounds: number;
  warmupRounds: number;
  proposalsPerSec: number;
  roundRates: number[];
  perProposalMedianUs: number;
  perProposalP95Us: number;
  /** Median time per item kind, from individually timed calls. */
  byKindUs: Record<string, number>;
}

function runPure(items: readonly PureItem[], rounds: number, warmup: number): PureResult {
  let sink = 0;
  // Every round starts with the text memo cold: within a round, proposals citing the same turns
  // share normalizations as they would in one reflection batch, but no round reuses another's.
  const once = (): number => {
    resetTextMemo();
    const t0 = performance.now();
    for (const it of items) if (checkProposal(it.proposal, it.ctx).ok) sink++;
    return performance.now() - t0;
  };
  for (let r = 0; r < warmup; r++) once();
  const roundRates: number[] = [];
  for (let r = 0; r < rounds; r++) roundRates.push(items.length / (once() / 1000));
  // Each call timed alone (hrtime costs well under a microsecond), for the per-proposal figures.
  const samples: number[] = [];
  const byKind = new Map<string, number[]>();
  for (let r = 0; r < Math.max(3, Math.ceil(rounds / 3)); r++) {
    resetTextMemo();
    for (const it of items) {
      const t0 = process.hrtime.bigint();
      if (checkProposal(it.proposal, it.ctx).ok) sink++;
      const us = Number(process.hrtime.bigint() - t0) / 1000;
      samples.push(us);
      const list = byKind.get(it.kind) ?? [];
      list.push(us);
      byKind.set(it.kind, list);
    }
  }
  if (sink === 0) throw new Error('no proposal passed: the pure run measured nothing useful');
  return {
    proposals: items.length,
    rounds,
    warmupRounds: warmup,
    proposalsPerSec: median(roundRates),
    roundRates,
    perProposalMedianUs: median(samples),
    perProposalP95Us: percentile(samples, 0.95),
    byKindUs: Object.fromEntries([...byKind].map(([k, xs]) => [k, median(xs)])),
  };
}

// ---------------------------------------------------------------------------------------------
// End to end through the store.

/** A fresh store per round (new PGlite instance or new schema), dropped even on failure. */
function withStore<T>(kind: Kind, fn: (engine: Engine) => Promise<T>): Promise<T> {
  return withBenchStore(kind, 'ml_gate_bench', fn);
}

/**
 * The subject, the 50-turn session, and the retracted claims. The engine has no retraction call
 * to seed them with yet, so they are written as rows: into the retraction ledger when the store
 * has one (the gate reads standing claims there), else as facts with status `retracted` (the
 * hook the gate read before the ledger). Either way the mix check below proves they took.
 */
async function seedStore(engine: Engine, conv: Conversation): Promise<void> {
  await engine.init({ subject: SUBJECT });
  await engine.sessions.create({ id: SESSION, subject: SUBJECT });
  for (const t of conv.turns) {
    const base = { sessionId: SESSION, role: t.role, content: t.content };
    const result = await engine.turns.add({
      ...base,
      ...(t.receipt === undefined ? {} : { receipt: t.receipt }),
      ...(t.corrective ? { corrective: true } : {}),
    });
    if (!result.recorded || result.turn.seq !== t.seq) {
      throw new Error(`turn ${t.seq} was not recorded at its seq`);
    }
  }
  const at = new Date();
  const { rows } = await engine.sql.query<{ ledger: boolean }>(
    `SELECT to_regclass('retractions') IS NOT NULL AS ledger`,
  );
  for (const [i, claim] of conv.retracted.entries()) {
    if (rows[0]?.ledger === true) {
      await engine.sql.query(
        `INSERT INTO retractions (subject_id, id, claim, stood_on, why_wrong, corrected_claim,
           corrected_at, caught_by, procedure, pass_observation, overturn_condition, due_at,
           recorded_at)
         VALUES ($1, $2, $3, 'a reflection', 'the user never said it', 'unknown', $4, 'owner',
           'ask the user', 'the user confirms it is wrong', 'the user confirms it', $5, $4)`,
        [SUBJECT, `retracted-${i}`, claim, at, new Date(at.getTime() + 30 * 86_400_000)],
      );
    } else {
      await engine.sql.query(
        `INSERT INTO facts (subject_id, id, slot, text, origin, status, attested, proposed_by,
           recorded_at, status_at)
         VALUES ($1, $2, 'what_i_know_about_user', $3, 'inferred', 'retracted', false, 'bench',
           $4, $4)`,
        [SUBJECT, `retracted-${i}`, claim, at],
      );
    }
  }
}

interface StoreRound {
  proposalsPerSec: number;
  batchMs: number[];
}

interface StoreResult {
  engine: Kind;
  proposalsPerSec: number;
  batchMedianMs: number;
  proposed: number;
  dropped: number;
  codes: Record<string, number>;
  rounds: StoreRound[];
}

function tally(results: readonly ProposeResult[]): Record<string, number> {
  const codes: Record<string, number> = {};
  for (const r of results) {
    codes.ok = (codes.ok ?? 0) + r.proposed.length;
    for (const d of r.dropped) codes[d.code] = (codes[d.code] ?? 0) + 1;
  }
  return codes;
}

async function runStore(
  kind: Kind,
  conv: Conversation,
  warmBatch: readonly BenchItem[],
  batches: readonly BenchItem[][],
  roundCount: number,
): Promise<StoreResult> {
  const rounds: StoreRound[] = [];
  let last: ProposeResult[] = [];
  for (let r = 0; r < roundCount; r++) {
    const round = await withStore(kind, async (engine) => {
      await seedStore(engine, conv);
      const propose = (batch: readonly BenchItem[]): Promise<ProposeResult> =>
        engine.propose({
          sessionId: SESSION,
          proposals: batch.map((x) => x.raw),
          proposedBy: 'reflection',
        });
      await propose(warmBatch);
      const batchMs: number[] = [];
      const results: ProposeResult[] = [];
      for (const batch of batches) {
        const t0 = performance.now();
        results.push(await propose(batch));
        batchMs.push(performance.now() - t0);
      }
      last = results;
      const total = batchMs.reduce((a, b) => a + b, 0);
      return { proposalsPerSec: (batches.length * BATCH_SIZE) / (total / 1000), batchMs };
    });
    rounds.push(round);
    process.stderr.write(
      `${kind} round ${r + 1}/${roundCount}: ${round.proposalsPerSec.toFixed(0)} proposals/s\n`,
    );
  }
  const codes = tally(last);
  const proposed = codes.ok ?? 0;
  return {
    engine: kind,
    proposalsPerSec: median(rounds.map((r) => r.proposalsPerSec)),
    batchMedianMs: median(rounds.flatMap((r) => r.batchMs)),
    proposed,
    dropped: batches.length * BATCH_SIZE - proposed,
    codes,
    rounds,
  };
}

// ---------------------------------------------------------------------------------------------

function positiveInt(name: string, value: string, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new Error(`--${name} must be a whole number >= ${min}`);
  return n;
}

function countBy<T>(xs: readonly T[], key: (x: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[key(x)] = (out[key(x)] ?? 0) + 1;
  return out;
}

const sameCounts = (a: Record<string, number>, b: Record<string, number>): boolean =>
  [...new Set([...Object.keys(a), ...Object.keys(b)])].every((k) => a[k] === b[k]);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      batches: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '3' },
      'pure-rounds': { type: 'string', default: '30' },
      'pure-warmup': { type: 'string', default: '5' },
      engines: { type: 'string', default: KINDS.join(',') },
      json: { type: 'boolean', default: false },
    },
  });
  const batchCount = positiveInt('batches', values.batches, 1);
  const roundCount = positiveInt('rounds', values.rounds, 1);
  const pureRounds = positiveInt('pure-rounds', values['pure-rounds'], 1);
  const pureWarmup = positiveInt('pure-warmup', values['pure-warmup'], 0);
  const kinds = await benchKinds(values.engines);

  const conv = buildConversation();
  const warmBatch = makeBatch(conv, 0);
  const batches = Array.from({ length: batchCount }, (_, b) => makeBatch(conv, b + 1));
  // The pure run replays the warm-up batch too, so its pile matches the store's exactly.
  const prepared = prepareContexts(conv, [warmBatch, ...batches]);
  const items = prepared.filter((x) => x.batch > 0);

  // The mix, checked: every item must meet the verdict it was built for.
  const misses = items.filter((x) => x.verdict !== x.expect);
  const pureCodes = countBy(items, (x) => x.verdict);
  const userTurns = conv.turns.filter((t) => t.role === 'user').map((t) => t.content.length);
  const workload = {
    batches: batchCount,
    batchSize: BATCH_SIZE,
    proposals: items.length,
    sessionTurns: conv.turns.length,
    userTurnChars: {
      min: Math.min(...userTurns),
      median: median(userTurns),
      max: Math.max(...userTurns),
    },
    retractedClaims: conv.retracted.length,
    expected: countBy(items, (x) => x.expect),
    pureCodes,
    attested: items.filter((x) => x.attested).length,
    mismatches: misses.map((x) => ({
      kind: x.kind,
      expected: x.expect,
      got: x.verdict,
      text: x.proposal.text,
    })),
  };

  const pure = runPure(items, pureRounds, pureWarmup);
  process.stderr.write(`pure: ${pure.proposalsPerSec.toFixed(0)} proposals/s\n`);

  const store: StoreResult[] = [];
  for (const kind of kinds) {
    store.push(await runStore(kind, conv, warmBatch, batches, roundCount));
  }
  const storeAgrees = store.every((s) => sameCounts(s.codes, pureCodes));

  if (values.json) {
    console.log(
      JSON.stringify(
        { target: TARGET, workload, pure, store, mixOk: misses.length === 0, storeAgrees },
        null,
        2,
      ),
    );
    return;
  }

  const fmt = (n: number, w = 7): string => Math.round(n).toLocaleString('en-US').padStart(w);
  console.log(
    `gate: ${items.length} proposals (${batchCount} batches of ${BATCH_SIZE}) on a ` +
      `${conv.turns.length}-turn session (user turns ${workload.userTurnChars.min}-` +
      `${workload.userTurnChars.max} chars, median ${workload.userTurnChars.median}), ` +
      `${conv.retracted.length} retracted claims`,
  );
  console.log('');
  console.log(`${'item kind'.padEnd(38)} ${'expect'.padEnd(22)} ${'n'.padStart(4)}  median µs`);
  for (const [kind, count, expect] of MIX) {
    const us = pure.byKindUs[kind] ?? NaN;
    console.log(
      `${kind.padEnd(38)} ${expect.padEnd(22)} ${String(count * batchCount).padStart(4)}  ${us.toFixed(1).padStart(9)}`,
    );
  }
  console.log('');
  const codeLine = (codes: Record<string, number>): string =>
    Object.entries(codes)
      .sort((a, b) => b[1] - a[1])
      .map(([c, n]) => `${c} ${n}`)
      .join(', ');
  console.log(
    `verdicts (pure):  ${codeLine(pureCodes)}; attested ${workload.attested} of ${pureCodes.ok ?? 0} passed`,
  );
  for (const s of store)
    console.log(
      `verdicts (${s.engine}):${' '.repeat(Math.max(1, 8 - s.engine.length))}${codeLine(s.codes)}`,
    );
  console.log(
    misses.length === 0
      ? `mix check: every item got the verdict it was built for${store.length > 0 ? (storeAgrees ? '; the stores agree' : '') : ''}`
      : `MIX CHECK FAILED: ${misses.length} items missed their verdict (e.g. ${misses[0]?.kind}: expected ${misses[0]?.expect}, got ${misses[0]?.verdict})`,
  );
  if (!storeAgrees)
    console.log('STORE CHECK FAILED: a store judged the batches differently from the pure rules');
  console.log('');
  console.log(
    `pure rules ${fmt(pure.proposalsPerSec)} proposals/s  (median of ${pure.rounds} rounds, ` +
      `${pure.warmupRounds} warm-up; per proposal median ${pure.perProposalMedianUs.toFixed(1)} µs, ` +
      `p95 ${pure.perProposalP95Us.toFixed(1)} µs)  target >= ${TARGET.toLocaleString('en-US')}/s: ` +
      `${pure.proposalsPerSec >= TARGET ? 'met' : 'NOT met'}`,
  );
  for (const s of store) {
    console.log(
      `${s.engine.padEnd(10)} ${fmt(s.proposalsPerSec)} proposals/s  (median of ${s.rounds.length} rounds; ` +
        `batch of ${BATCH_SIZE} median ${s.batchMedianMs.toFixed(1)} ms; ${s.proposed} proposed, ` +
        `${s.dropped} dropped per round)`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(`gate-bench: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
