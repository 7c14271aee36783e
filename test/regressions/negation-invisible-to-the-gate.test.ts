// Negators are stopwords, so "not moved to Tuesday" matched the retracted "moved to Tuesday" and "does not work nights" was attested by "I work nights".
import { describe, expect, it } from 'vitest';
import { DEFAULT_CORRECTION_CUES, DEFAULT_FAILURE_CUES } from '../../src/index.js';
import { checkProposal, isAttestedBy } from '../../src/rules.js';

const turn = (content: string, at: string) => ({
  id: 't1',
  seq: 1,
  sessionId: 's',
  role: 'user' as const,
  content,
  corrective: false,
  receiptTools: [],
  recordedAt: new Date(at),
});

describe('negation at the gate', () => {
  it('does not attest a negated claim with an affirmative turn, and still attests an agreeing one', () => {
    expect(isAttestedBy('The user does not work nights', 'I work nights at the depot')).toBe(false);
    expect(isAttestedBy('The user works nights at the depot', 'I work nights at the depot')).toBe(
      true,
    );
    expect(
      isAttestedBy('The user never works weekends', 'I never work weekends at the depot'),
    ).toBe(true);
  });

  it('does not drop the correction of a retracted claim as its re-assertion, and still drops the re-assertion', () => {
    const ctx = {
      slot: { name: 'stances', rule: 'user_fact' as const, autoLive: false },
      citedTurn: turn(
        'The meeting was not moved to Tuesday, and the meeting was moved once before.',
        '2026-10-01T00:00:00Z',
      ),
      correctionCues: DEFAULT_CORRECTION_CUES,
      failureCues: DEFAULT_FAILURE_CUES,
      earlierTurnTexts: [],
      retractedClaims: [
        { text: 'The meeting was moved to Tuesday', retractedAt: new Date('2026-10-05T00:00:00Z') },
      ],
      liveOrPendingTexts: [],
    };
    const quote = 'The meeting was not moved to Tuesday';
    expect(
      checkProposal(
        {
          slot: 'stances',
          text: 'The meeting was not moved to Tuesday',
          origin: 'saw',
          evidence: { turn: 1, quote },
        },
        ctx,
      ).ok,
    ).toBe(true);
    expect(
      checkProposal(
        {
          slot: 'stances',
          text: 'The meeting was moved to Tuesday',
          origin: 'saw',
          evidence: { turn: 1, quote: 'the meeting was moved once before' },
        },
        ctx,
      ),
    ).toMatchObject({ ok: false, code: 'RETRACTED_CLAIM' });
  });
});
