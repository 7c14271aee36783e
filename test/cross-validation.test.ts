import { describe, expect, it } from 'vitest';
import { bestValue, heldOutMean, leaveOneOut } from '../bench/support/cross-validation.js';

describe('leave-one-conversation-out cross-validation', () => {
  const convs = ['a', 'b', 'c'];

  it('scores each conversation with the value the others choose', () => {
    // 2 wins on a and b; 3 wins only on c, where it is measured
    const scores = new Map([
      [
        1,
        new Map([
          ['a', 0.5],
          ['b', 0.5],
          ['c', 0.5],
        ]),
      ],
      [
        2,
        new Map([
          ['a', 0.8],
          ['b', 0.7],
          ['c', 0.4],
        ]),
      ],
      [
        3,
        new Map([
          ['a', 0.1],
          ['b', 0.1],
          ['c', 0.9],
        ]),
      ],
    ]);
    const held = leaveOneOut(scores, convs, 1);
    expect(held.map((h) => [h.conversation, h.chosen, h.score])).toEqual([
      ['a', 2, 0.8],
      ['b', 2, 0.7],
      // c never gets 3: the value that wins only where it is measured is not chosen for it
      ['c', 2, 0.4],
    ]);
    expect(heldOutMean(held)).toBeCloseTo((0.8 + 0.7 + 0.4) / 3, 12);
    // the negative control: chosen on every conversation, 3 looks best on c's own score
    expect(bestValue(scores, ['c'], 1)).toBe(3);
  });

  it('keeps the default on a tie', () => {
    const scores = new Map([
      [
        1,
        new Map([
          ['a', 0.5],
          ['b', 0.5],
          ['c', 0.5],
        ]),
      ],
      [
        2,
        new Map([
          ['a', 0.5],
          ['b', 0.5],
          ['c', 0.5],
        ]),
      ],
    ]);
    expect(bestValue(scores, convs, 2)).toBe(2);
    expect(bestValue(scores, convs, 1)).toBe(1);
  });
});
