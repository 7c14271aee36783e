import { describe, expect, it } from 'vitest';
import {
  joinRounds,
  joinTextBlocks,
  textJoinSeparator,
  type ResponseBlock,
} from '../src/history/text-join.js';

const text = (t: string): ResponseBlock => ({ type: 'text', text: t });
const toolUse: ResponseBlock = {
  type: 'server_tool_use',
  id: 'srvtoolu_1',
  name: 'web_search',
  input: { query: 'weather reykjavik' },
};
const toolResult: ResponseBlock = {
  type: 'web_search_tool_result',
  tool_use_id: 'srvtoolu_1',
  content: [{ type: 'web_search_result', url: 'https://example.com/w', title: 'Weather' }],
};

describe('textJoinSeparator', () => {
  it('is one space between two non-whitespace edges', () => {
    expect(textJoinSeparator('decided to.', 'Good')).toBe(' ');
  });

  it('is empty when either side already has whitespace at the seam', () => {
    expect(textJoinSeparator('decided to. ', 'Good')).toBe('');
    expect(textJoinSeparator('decided to.', ' Good')).toBe('');
    expect(textJoinSeparator('decided to.\n', 'Good')).toBe('');
    expect(textJoinSeparator('decided to.', '\nGood')).toBe('');
  });

  it('is empty when either side is empty', () => {
    expect(textJoinSeparator('', 'Good')).toBe('');
    expect(textJoinSeparator('decided to.', '')).toBe('');
  });
});

describe('joinTextBlocks', () => {
  it('puts a separator at a seam after a server_tool_use block (no "to.Good")', () => {
    const out = joinTextBlocks([
      text('I decided to.'),
      { type: 'server_tool_use' },
      text('Good news: it is sunny.'),
    ]);
    expect(out).toBe('I decided to. Good news: it is sunny.');
    expect(out).not.toContain('to.Good');
  });

  it('puts one separator after a run of several tool blocks', () => {
    const out = joinTextBlocks([
      text('Let me check.'),
      toolUse,
      toolResult,
      text('Mostly cloudy today.'),
    ]);
    expect(out).toBe('Let me check. Mostly cloudy today.');
  });

  it('keeps a sentence split by a citation as one sentence with nothing added', () => {
    const blocks: ResponseBlock[] = [
      text('The temperature is '),
      {
        type: 'text',
        text: '86°F',
        citations: [
          { type: 'web_search_result_location', url: 'https://example.com/w', cited_text: '86' },
        ],
      },
      text(', with light winds.'),
    ];
    const out = joinTextBlocks(blocks);
    expect(out).toBe('The temperature is 86°F, with light winds.');
    expect(out.length).toBe(
      'The temperature is '.length + '86°F'.length + ', with light winds.'.length,
    );
  });

  it('keeps a cited sentence intact after a tool round and separates only at the tool seam', () => {
    const out = joinTextBlocks([
      text('I will search.'),
      toolUse,
      toolResult,
      text('The temperature is '),
      { type: 'text', text: '86°F', citations: [{ url: 'https://example.com/w' }] },
      text(', with light winds.'),
    ]);
    expect(out).toBe('I will search. The temperature is 86°F, with light winds.');
  });

  it('does not add a double space when the left side already ends in whitespace', () => {
    const out = joinTextBlocks([text('Searching now. '), toolUse, text('Found it.')]);
    expect(out).toBe('Searching now. Found it.');
    expect(out).not.toContain('  ');
  });

  it('does not add a double space when the right side already starts with whitespace', () => {
    const out = joinTextBlocks([text('Searching now.'), toolUse, text(' Found it.')]);
    expect(out).toBe('Searching now. Found it.');
    expect(out).not.toContain('  ');
  });

  it('does not add a space when the right side starts with a newline', () => {
    const out = joinTextBlocks([text('Searching now.'), toolUse, text('\n\nFound it.')]);
    expect(out).toBe('Searching now.\n\nFound it.');
  });

  it('adds nothing for leading or trailing tool blocks', () => {
    expect(joinTextBlocks([toolUse, toolResult, text('Answer.')])).toBe('Answer.');
    expect(joinTextBlocks([text('Answer.'), toolUse, toolResult])).toBe('Answer.');
  });

  it('skips empty text blocks without losing the seam', () => {
    expect(joinTextBlocks([text('A.'), toolUse, text(''), text('B.')])).toBe('A. B.');
    expect(joinTextBlocks([text(''), text('A.'), text(''), text('B.')])).toBe('A.B.');
    expect(joinTextBlocks([text(''), toolUse, text('A.')])).toBe('A.');
  });

  it('returns the empty string when there is no text', () => {
    expect(joinTextBlocks([])).toBe('');
    expect(joinTextBlocks([text(''), text('')])).toBe('');
    expect(joinTextBlocks([toolUse, toolResult])).toBe('');
  });
});

describe('joinRounds', () => {
  it('separates successive tool rounds', () => {
    const out = joinRounds([
      [text('I decided to.'), toolUse],
      [toolResult, text('Good, the first search worked.'), toolUse],
      [toolResult, text('Meanwhile, the second did too.')],
    ]);
    expect(out).toBe('I decided to. Good, the first search worked. Meanwhile, the second did too.');
    expect(out).not.toMatch(/\.[A-Z]/);
  });

  it('treats a round boundary as a seam even without tool blocks in the rounds', () => {
    expect(joinRounds([[text('First round.')], [text('Second round.')]])).toBe(
      'First round. Second round.',
    );
  });

  it('keeps cited sentences within a round intact', () => {
    const out = joinRounds([
      [text('Checking.')],
      [text('It is '), { type: 'text', text: '86°F', citations: [] }, text(' today.')],
    ]);
    expect(out).toBe('Checking. It is 86°F today.');
  });

  it('does not double whitespace at a round boundary', () => {
    expect(joinRounds([[text('First. ')], [text('Second.')]])).toBe('First. Second.');
    expect(joinRounds([[text('First.')], [text('\nSecond.')]])).toBe('First.\nSecond.');
  });

  it('handles empty rounds and empty text', () => {
    expect(joinRounds([])).toBe('');
    expect(joinRounds([[], [text('Only.')], []])).toBe('Only.');
    expect(joinRounds([[text('A.')], [text('')], [text('B.')]])).toBe('A. B.');
  });

  it('gives the same result as joinTextBlocks with a tool block at each boundary', () => {
    const rounds: ResponseBlock[][] = [
      [text('one.')],
      [text('two'), text('.')],
      [toolResult, text('three.')],
    ];
    const flat = rounds.flatMap((r, i) => (i === 0 ? r : [toolUse, ...r]));
    expect(joinRounds(rounds)).toBe(joinTextBlocks(flat));
  });
});
