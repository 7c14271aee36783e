import { describe, expect, it } from 'vitest';
import { aboutAgent, attest, type AttestationVerdict } from '../src/domain/attestation.js';
import type { CitedTurn, Proposal, SlotDeclaration } from '../src/domain/fact.js';
import { checkProposal, type GateContext } from '../src/domain/gate-rules.js';

/** The verdict for a claim quoting `quote` (default: the whole turn) out of `turn`. */
const verdictOf = (claim: string, turn: string, quote = turn): AttestationVerdict =>
  attest(claim, quote, turn).verdict;

// Each rule: a case that triggers it and a near-miss that does not (docs/ATTESTATION.md).
describe('typed attestation: each verdict, with its near-miss', () => {
  it('asserted: the user states it in their own voice; the only verdict that counts', () => {
    expect(verdictOf('The user is allergic to cats.', "I'm allergic to cats.")).toBe('asserted');
    expect(verdictOf('The user moved to Lund.', 'My wife and I moved to Lund in March.')).toBe(
      'asserted',
    );
    expect(verdictOf('The user does not eat meat.', "I don't eat meat.")).toBe('asserted');
    expect(
      verdictOf('The user no longer lives in Oslo.', 'I no longer live in Oslo; I left last year.'),
    ).toBe('asserted');
    const a = attest('The user is allergic to cats.', 'allergic to cats', "I'm allergic to cats.");
    expect(a.reason).toMatch(/the user states it/u);
  });

  it('presupposed: a question or a request takes it for granted', () => {
    expect(
      verdictOf('The user is allergic to peanuts.', 'Do you think I am allergic to peanuts?'),
    ).toBe('presupposed');
    // the seed-001 plant: a request to be reminded is no record that a decision happened
    const seed = 'Remind me what we decided last week about the vendor contract.';
    const a = attest(
      'The user and the agent decided something about the vendor contract last week.',
      seed,
      seed,
    );
    expect(a.verdict).toBe('presupposed');
    expect(a.reason).toMatch(/request/u);
    // the question's words quoted without the question still read in their sentence
    expect(
      verdictOf(
        'The user is allergic to peanuts.',
        'Do you think I am allergic to peanuts?',
        'I am allergic to peanuts',
      ),
    ).toBe('presupposed');
    expect(
      verdictOf('The user passport expires soon.', 'Remind me when my passport expires soon.'),
    ).toBe('presupposed');
  });

  it('presupposed near-miss: a statement before the question still states', () => {
    expect(
      verdictOf(
        'The user is allergic to peanuts.',
        "I'm allergic to peanuts, do you have a safe satay recipe?",
        "I'm allergic to peanuts",
      ),
    ).toBe('asserted');
    expect(
      verdictOf('The user is allergic to peanuts.', "I'm allergic to peanuts. Any recipes?"),
    ).toBe('asserted');
  });

  it('hypothetical: conditional, modal, wished or hedged, and the claim drops the hedge', () => {
    expect(
      verdictOf(
        'The user is moving to Berlin.',
        'If I ever move to Berlin I will need a new bank.',
      ),
    ).toBe('hypothetical');
    expect(
      verdictOf(
        'The user is adopting a dog next year.',
        "Maybe I'll adopt a dog next year, we'll see.",
      ),
    ).toBe('hypothetical');
    expect(
      verdictOf(
        'The user is allergic to cats.',
        "I'm not sure, but I think I'm allergic to cats",
        "I'm allergic to cats",
      ),
    ).toBe('hypothetical');
  });

  it('hypothetical near-miss: the claim keeps the hedge, or the hedge is in another clause', () => {
    expect(
      verdictOf('The user is considering adopting a dog.', "I'm considering adopting a dog."),
    ).toBe('asserted');
    expect(
      verdictOf(
        'The user bought the blue bike.',
        "I'm not sure about the colour, but I bought the blue bike.",
        'I bought the blue bike',
      ),
    ).toBe('asserted');
    // "May" the month is no modal
    expect(
      verdictOf('The user quit their job at Ikea in May.', 'I quit my job at Ikea in May.'),
    ).toBe('asserted');
  });

  it('negated: the quote denies it, or says it is over', () => {
    expect(verdictOf('The user works at Volvo.', 'I stopped working at Volvo in 2023.')).toBe(
      'negated',
    );
    expect(verdictOf('The user plays the cello.', 'I used to play the cello.')).toBe('negated');
    expect(verdictOf('The user drinks coffee.', 'I never drink coffee.')).toBe('negated');
    expect(
      verdictOf('The user is in the Tuesday book club.', 'I quit the Tuesday book club.'),
    ).toBe('negated');
  });

  it('negated near-miss: the claim keeps the denial; a denial of something else', () => {
    expect(
      verdictOf(
        'The user stopped working at Volvo in 2023.',
        'I stopped working at Volvo in 2023.',
      ),
    ).toBe('asserted');
    expect(
      verdictOf(
        'The user was diagnosed with coeliac disease in 2019.',
        'I was diagnosed with coeliac disease in 2019 so gluten is a hard no.',
        'I was diagnosed with coeliac disease in 2019',
      ),
    ).toBe('asserted');
    expect(verdictOf('The user went to the gym.', 'I left work early and went to the gym.')).toBe(
      'asserted',
    );
  });

  it('other_holder: about someone else, or someone else’s belief', () => {
    expect(
      verdictOf('The user is a doctor at Karolinska.', 'My wife is a doctor at Karolinska.'),
    ).toBe('other_holder');
    const a = attest(
      'The user should quit their job.',
      'I should quit my job',
      'My brother thinks I should quit my job.',
    );
    expect(a.verdict).toBe('other_holder');
    expect(a.reason).toMatch(/brother/u);
    expect(
      verdictOf(
        'The user has diabetes.',
        'The doctor told my dad he has diabetes.',
        'he has diabetes',
      ),
    ).toBe('other_holder');
  });

  it('other_holder near-miss: the user among the subjects, or the claim names the holder', () => {
    expect(verdictOf('The user moved to Lund.', 'My wife and I moved to Lund.')).toBe('asserted');
    expect(
      verdictOf("The user's wife is a doctor at Karolinska.", 'My wife is a doctor at Karolinska.'),
    ).toBe('asserted');
    expect(verdictOf('The user is moving to Lund.', "I told my brother I'm moving to Lund.")).toBe(
      'asserted',
    );
  });

  it('paraphrase_unverified: the words overlap, the relation is not found', () => {
    expect(
      verdictOf('The user works at the central hospital.', 'I work near the central hospital.'),
    ).toBe('paraphrase_unverified');
    expect(
      verdictOf('The user has diabetes.', 'I watched a documentary about diabetes last night.'),
    ).toBe('paraphrase_unverified');
    expect(
      verdictOf(
        "The user's sister drove the user to the airport.",
        'I drove my sister to the airport.',
      ),
    ).toBe('paraphrase_unverified');
    expect(verdictOf('The user lives in Paris and works as a nurse.', 'I live in Paris.')).toBe(
      'paraphrase_unverified',
    );
  });

  it('paraphrase_unverified near-miss: the same relation in other inflections', () => {
    expect(
      verdictOf('The user works at the central hospital.', 'I work at the central hospital.'),
    ).toBe('asserted');
    expect(verdictOf('The user is worried about their exam.', "I'm worried about my exam.")).toBe(
      'asserted',
    );
    expect(
      verdictOf('The user spent 300 euros on the repair.', 'I spent 300 euros on the repair.'),
    ).toBe('asserted');
  });

  it('not_found: the quote says none of it', () => {
    expect(verdictOf('The user owns a sailboat.', 'I had pasta for lunch.')).toBe('not_found');
    expect(
      verdictOf('The user owns a sailboat.', 'I own a sailboat and sail it every weekend.'),
    ).not.toBe('not_found');
  });
});

describe('whose fact it is: NOT_ABOUT_USER', () => {
  const selfAssessments = [
    'My memory failed me regarding the vendor contract decision',
    'There is a gap in my records about the vendor contract that the user remembers',
    "I should trust the user's memory over my records",
    "I ignored the user's message earlier",
    "The assistant misremembered the user's flight time",
    'The agent forgot the meeting',
  ];
  it.each(selfAssessments)('drops %s', (claim) => {
    expect(aboutAgent(claim)).not.toBeNull();
  });
  it('keeps facts about the user, including what they want of the agent', () => {
    expect(aboutAgent('The user prefers the assistant to reply in Swedish')).toBeNull();
    expect(aboutAgent('The user is allergic to peanuts')).toBeNull();
    expect(aboutAgent('User moved to Lund in 2019')).toBeNull();
  });
  it("keeps the user's own first person when the claim quotes them from the cited turn, and only then", () => {
    const turn = 'I live in Oslo now. 2019 was my best year.';
    expect(aboutAgent('The user said: I live in Oslo now.', turn)).toBeNull();
    expect(aboutAgent('The user called 2019 "my best year".', turn)).toBeNull();
    expect(aboutAgent('The user said my records were wrong.', turn)).not.toBeNull();
    // words the turn does not hold are no quote of the user: without a turn, nothing is exempt
    expect(aboutAgent('The user said: I live in Oslo now.')).not.toBeNull();
    const blame = 'As I said, you forgot what we decided about the vendor contract.';
    expect(
      aboutAgent('The user said: I forgot what we decided about the vendor contract', blame),
    ).not.toBeNull();
    expect(aboutAgent('"I forgot the vendor contract decision again."', blame)).not.toBeNull();
  });

  it('sees the agent as "you", named anywhere, and behind look-alike letters', () => {
    for (const claim of [
      'Your memory of the vendor contract is missing',
      "The user's assistant forgot the vendor contract decision again",
      'The user had to remind the agent again that they signed the vendor contract on Monday',
      '\u0399 forgot the vendor contract decision again',
      '\u041Cy records are incomplete',
    ]) {
      expect(aboutAgent(claim), claim).not.toBeNull();
    }
    expect(aboutAgent('The user prefers the assistant to reply in Swedish')).toBeNull();
  });
});

describe('the gate carries the verdict', () => {
  const slot: SlotDeclaration = {
    name: 'what_i_know_about_user',
    rule: 'user_fact',
    autoLive: false,
  };
  const turnOf = (content: string): CitedTurn => ({
    id: 't1',
    seq: 3,
    sessionId: 's',
    role: 'user',
    content,
    corrective: false,
    receiptTools: [],
    recordedAt: new Date('2026-11-01T09:00:00Z'),
  });
  const ctxOf = (content: string, s: SlotDeclaration = slot): GateContext => ({
    slot: s,
    citedTurn: turnOf(content),
    correctionCues: [],
    failureCues: [],
    earlierTurnTexts: [],
    retractedClaims: [],
    liveOrPendingTexts: [],
  });
  const proposal = (text: string, quote: string, s = slot.name): Proposal => ({
    slot: s,
    text,
    origin: 'saw',
    evidence: { turn: 3, quote },
  });

  it('a question passes to the pile, unattested, with its verdict and reason', () => {
    const turn = 'Do you think I am allergic to peanuts?';
    const v = checkProposal(
      proposal('The user is allergic to peanuts.', 'allergic to peanuts'),
      ctxOf(turn),
    );
    expect(v).toMatchObject({ ok: true, attested: false, attestation: { verdict: 'presupposed' } });
  });

  it('an assertion is attested, its verdict asserted', () => {
    const turn = "I'm allergic to peanuts.";
    const v = checkProposal(
      proposal('The user is allergic to peanuts.', 'allergic to peanuts'),
      ctxOf(turn),
    );
    expect(v).toMatchObject({ ok: true, attested: true, attestation: { verdict: 'asserted' } });
  });

  it('drops an agent self-assessment in a user_fact slot with NOT_ABOUT_USER, citing a real quote', () => {
    const turn = 'What did we decide about the vendor contract? You should know this.';
    const v = checkProposal(
      proposal('There is a gap in my records about the vendor contract', 'the vendor contract'),
      ctxOf(turn),
    );
    expect(v).toMatchObject({ ok: false, code: 'NOT_ABOUT_USER' });
  });

  it('NOT_ABOUT_USER near-miss: the correction slot takes the agent’s own behaviour', () => {
    const correction: SlotDeclaration = {
      name: 'corrections_received',
      rule: 'correction',
      autoLive: false,
    };
    const turn = "No, that's wrong: we moved the meeting to Tuesday.";
    const v = checkProposal(
      proposal('I had the meeting day wrong; it is Tuesday', "No, that's wrong", correction.name),
      { ...ctxOf(turn, correction), correctionCues: ['wrong'] },
    );
    expect(v.ok).toBe(true);
  });

  it('reads a correction past its framing: what follows "The user corrected me:" is what the quote must say', () => {
    const correction: SlotDeclaration = {
      name: 'corrections_received',
      rule: 'correction',
      autoLive: false,
    };
    const turn = 'No, that is wrong: my servers run Python 3.8, not 3.11.';
    // the host recorded the turn as corrective: the correction rule passes on that
    const ctx = { ...ctxOf(turn, correction), citedTurn: { ...turnOf(turn), corrective: true } };
    const said = checkProposal(
      proposal(
        'The user corrected me: their servers run Python 3.8, not 3.11.',
        'my servers run Python 3.8, not 3.11',
        correction.name,
      ),
      ctx,
    );
    expect(said).toMatchObject({ ok: true, attested: true });
    // near-miss: the framing does not make words the quote lacks its own
    const unsaid = checkProposal(
      proposal(
        'The user corrected me: their servers run Python 3.12.',
        'my servers run Python 3.8, not 3.11',
        correction.name,
      ),
      ctx,
    );
    expect(unsaid).toMatchObject({ ok: true, attested: false });
  });
});

describe('what an attacker tried (an attacker review of the first version)', () => {
  const rows: Array<[turn: string, claim: string, verdict: AttestationVerdict]> = [
    ["I'm allergic to peanuts.", 'The user is not allergic to peanuts.', 'paraphrase_unverified'],
    ['I have two children.', 'The user has no children.', 'paraphrase_unverified'],
    ['I live in Oslo.', 'The user no longer lives in Oslo.', 'paraphrase_unverified'],
    ["I'm moving to Berlin next month.", 'The user moved to Berlin.', 'hypothetical'],
    ["I'm getting married in June.", 'The user is married.', 'hypothetical'],
    ['Both my kids are allergic to peanuts.', 'The user is allergic to peanuts.', 'other_holder'],
    [
      'Priya, who sits next to me, is allergic to peanuts.',
      'The user is allergic to peanuts.',
      'other_holder',
    ],
    ['I love Rome, but I live in Oslo.', 'The user lives in Rome.', 'paraphrase_unverified'],
    [
      "I'm allergic to dogs but I love cats.",
      'The user is allergic to cats.',
      'paraphrase_unverified',
    ],
    ['I moved from Oslo to Rome.', 'The user moved to Oslo.', 'paraphrase_unverified'],
    [
      'You forgot the vendor contract decision again.',
      'The user forgot the vendor contract decision.',
      'other_holder',
    ],
    ['Do you think I live in Ma\u0301laga?', 'The user lives in Málaga.', 'presupposed'],
    ['i cant eat dairy', 'The user cannot eat dairy.', 'asserted'],
    [
      'I take the 7:40 train to Malmö every weekday.',
      'The user takes the 7:40 train to Malmö every weekday.',
      'asserted',
    ],
  ];
  it.each(rows)('%s ⇒ %s: %s', (turn, claim, verdict) => {
    expect(verdictOf(claim, turn)).toBe(verdict);
  });

  it('reads a long turn in time linear in its length (runs of spaces, of "!")', () => {
    for (const turn of [
      `I live in Oslo.${' '.repeat(40_000)}x`,
      `${'!'.repeat(40_000)}x I live in Oslo.`,
      `I live in Oslo, ${'my friend '.repeat(4_000)}.`,
    ]) {
      const a = attest('The user lives in Oslo.', 'I live in Oslo', turn);
      expect(a.verdict).toBe('asserted');
    }
  });

  it('a quote that cannot be placed is never read alone', () => {
    expect(verdictOf('The user lives in Oslo.', 'I live in Lund.', 'I live in Oslo')).toBe(
      'paraphrase_unverified',
    );
  });
});

describe("docs/ATTESTATION.md's rule table, case and near-miss", () => {
  const rows: Array<[turn: string, claim: string, verdict: AttestationVerdict]> = [
    ['I had pasta for lunch.', 'The user owns a sailboat.', 'not_found'],
    ['I own a sailboat and sail it every weekend.', 'The user owns a sailboat.', 'asserted'],
    ["I'm allergic to cats.", 'The user owns a cat.', 'paraphrase_unverified'],
    [
      'My sister taught me to knit.',
      'The user taught their sister to knit.',
      'paraphrase_unverified',
    ],
    [
      'Me and my sister run the chip shop.',
      'The user runs a chip shop with their sister.',
      'asserted',
    ],
    [
      'If the visa comes through, I start in Toronto on March 1.',
      'The user starts in Toronto on March 1.',
      'hypothetical',
    ],
    [
      "If it holds we'll cut silage friday, we've got 40 acres of grass down.",
      'The user has 40 acres of grass down.',
      'asserted',
    ],
    [
      "My boss thinks I'm a slacker but I've hit every target this year.",
      'The user has hit every target this year.',
      'asserted',
    ],
    ['I live in Paris.', 'The user lives in Paris and works as a nurse.', 'paraphrase_unverified'],
    ['I watched a documentary about diabetes.', 'The user has diabetes.', 'paraphrase_unverified'],
    [
      'I work near the central hospital.',
      'The user works at the central hospital.',
      'paraphrase_unverified',
    ],
    [
      "I'm allergic to peanuts, do you have a safe satay recipe?",
      'The user is allergic to peanuts.',
      'asserted',
    ],
    [
      'Remind me tonight, I fly to Oslo on Friday.',
      'The user flies to Oslo on Friday.',
      'asserted',
    ],
    [
      'If I ever move to Berlin I will need a new bank.',
      'The user will need a new bank if they move to Berlin.',
      'asserted',
    ],
    ['I may take the job.', 'The user is taking the job.', 'hypothetical'],
    ['I was vegan for five years.', 'The user is vegan.', 'negated'],
    ['I was vegan for five years.', 'The user was vegan for five years.', 'asserted'],
    ["The apartment isn't mine anymore.", "The apartment is the user's.", 'negated'],
    ['I left Stockholm in 2021 and moved to Umeå.', 'The user moved to Umeå in 2021.', 'asserted'],
    [
      'I drove my sister to the airport.',
      "The user's sister drove the user to the airport.",
      'paraphrase_unverified',
    ],
    [
      'My sister drove me to the airport.',
      "The user's sister drove the user to the airport.",
      'asserted',
    ],
    [
      'Everyone at work assumes I broke the printer.',
      'The user broke the printer.',
      'other_holder',
    ],
    ["I don't eat meat.", 'The user does not eat meat.', 'asserted'],
    ["I'm moving to Berlin.", 'The user might move to Berlin.', 'paraphrase_unverified'],
    ["I'd like a window seat.", 'The user would like a window seat.', 'asserted'],
    [
      'My son has autism and starts secondary school next year.',
      "The user's son has autism.",
      'asserted',
    ],
    ['I moved to Rome from Oslo.', 'The user moved to Rome.', 'asserted'],
    [
      "My dad has Parkinson's so I visit him in Västerås every Sunday.",
      'The user visits their dad in Västerås every Sunday.',
      'asserted',
    ],
    [
      "Kai's teacher said hes reading well above his age.",
      'The user is reading well above their age.',
      'other_holder',
    ],
  ];
  it.each(rows)('%s ⇒ %s: %s', (turn, claim, verdict) => {
    expect(verdictOf(claim, turn)).toBe(verdict);
  });
  it('keeps the near-miss of NOT_ABOUT_USER', () => {
    expect(aboutAgent('The user wants the agent to stop suggesting recipes')).toBeNull();
  });
});

describe('a reason quotes the claim in its own words, never a stem', () => {
  it('names the words the quoted sentence does not say as the claim writes them', () => {
    const unsaid = attest(
      'The user lives in Paris and works as a nurse.',
      'I live in Paris',
      'I live in Paris.',
    );
    expect(unsaid.verdict).toBe('paraphrase_unverified');
    expect(unsaid.reason).toContain('does not say "works", "nurse"');
    const owns = attest('The user owns a cat.', 'allergic to cats', "I'm allergic to cats.");
    expect(owns.reason).toContain('does not say "owns"');
    // negative control: the stems themselves never appear quoted
    expect(`${unsaid.reason} ${owns.reason}`).not.toMatch(/"(?:work|nurs|own)"/u);
  });
});
