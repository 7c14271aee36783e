import { EngineError } from './errors.js';

/** Who caught the error: the agent itself, the owner, both together, or the world. */
export const CAUGHT_BY = ['self', 'owner', 'together', 'reality'] as const;
export type CaughtBy = (typeof CAUGHT_BY)[number];

/**
 * Verdicts are named for what won: `stands` (the retraction stands, the original claim stays
 * refuted), `overturned` (the retraction was wrong, the original claim is restored),
 * `unresolvable` (the ground truth can no longer be inspected).
 */
export const RETRACTION_VERDICTS = ['unchecked', 'stands', 'overturned', 'unresolvable'] as const;
export type RetractionVerdict = (typeof RETRACTION_VERDICTS)[number];
export const SETTLED_VERDICTS = ['stands', 'overturned', 'unresolvable'] as const;
export type SettledVerdict = (typeof SETTLED_VERDICTS)[number];

export const DEFAULT_DUE_DAYS = 3;

/**
 * The falsifier, typed from the start (seed 000 §5.2): how to check, what keeps the retraction
 * standing, and what would restore the original claim. Free prose let a test procedure pass for
 * a counterfactual with its polarity backwards.
 */
export interface Falsifier {
  procedure: string;
  passObservation: string;
  overturnCondition: string;
}

/**
 * How observations are compared for polarity: whitespace collapsed, trimmed, lowercased,
 * trailing punctuation dropped. The database CHECK uses the same steps
 * (memledger_observation_norm in migration 0004).
 */
export function normalizeObservation(s: string): string {
  return s
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase()
    .replace(/[.!?;:,]+$/, '')
    .trim();
}

/** Refuses a falsifier whose two observations are empty or say the same thing. */
export function checkPolarity(f: Falsifier): void {
  const pass = normalizeObservation(f.passObservation);
  const overturn = normalizeObservation(f.overturnCondition);
  if (pass === '' || overturn === '') {
    throw new EngineError(
      'POLARITY_NOT_DISTINCT',
      'a falsifier needs both observations: what keeps the retraction standing and what would overturn it',
    );
  }
  if (pass === overturn) {
    throw new EngineError(
      'POLARITY_NOT_DISTINCT',
      'the pass observation and the overturn condition are the same observation: the falsifier cannot decide anything',
    );
  }
}

/** When a falsifier matures: `days` after the correction. */
export function dueAt(correctedAt: Date, days: number): Date {
  return new Date(correctedAt.getTime() + days * 86_400_000);
}
