import type { Proposal } from '../../src/index.js';

/**
 * Items as a JavaScript caller or a model's JSON may send them, typed as proposals: the gate judges
 * each at run time and drops what is not one (INVALID_PROPOSAL), which these tests check.
 */
export function unchecked(items: readonly unknown[]): readonly Proposal[] {
  return items as readonly Proposal[];
}
