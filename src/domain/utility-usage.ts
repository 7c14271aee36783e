import type { UtilityKind } from './utility.js';

/** How often one session asked for a utility generation of one kind, and how much text. */
export interface UtilityUsage {
  kind: UtilityKind;
  /** Requests counted. */
  requests: number;
  /** Characters of the requests, summed. */
  chars: number;
  /** Tokens the provider counted in and out (memledger's own calls; 0 for a host's). */
  inputTokens: number;
  outputTokens: number;
  firstAt: Date;
  lastAt: Date;
}
