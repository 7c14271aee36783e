import { describe, expect, it } from 'vitest';
import { EngineError, type ErrorCode } from '../src/domain/errors.js';
import {
  RECEIPT_PREFIX,
  receiptFromReport,
  renderReceiptLine,
  type Receipt,
} from '../src/domain/receipt.js';
import { stripImitatedReceipts } from '../src/history/receipt-strip.js';
import { receiptReportFromBlocks } from '../src/history/response-receipt.js';
import type { ResponseBlock } from '../src/history/text-join.js';

function expectEngineError(fn: () => unknown, code: ErrorCode): EngineError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(EngineError);
  const error = caught as EngineError;
  expect(error.code).toBe(code);
  expect(error.message.length).toBeGreaterThan(0);
  return error;
}

describe('receiptFromReport', () => {
  it('makes a tools receipt from tools and sources', () => {
    expect(
      receiptFromReport({ tools: ['web_search'], sources: ['https://example.com/weather'] }),
    ).toEqual({ kind: 'tools', tools: ['web_search'], sources: ['https://example.com/weather'] });
  });

  it('makes a tools receipt with no sources from tools alone', () => {
    expect(receiptFromReport({ tools: ['read_file'] })).toEqual({
      kind: 'tools',
      tools: ['read_file'],
      sources: [],
    });
  });

  it('makes a negative receipt from noTools', () => {
    expect(receiptFromReport({ noTools: true })).toEqual({ kind: 'none' });
    expect(receiptFromReport({ noTools: true, tools: [], sources: [] })).toEqual({ kind: 'none' });
  });

  it('makes an unknown receipt when the host reported nothing', () => {
    expect(receiptFromReport(undefined)).toEqual({ kind: 'unknown' });
    expect(receiptFromReport({})).toEqual({ kind: 'unknown' });
    expect(receiptFromReport({ tools: [], sources: [] })).toEqual({ kind: 'unknown' });
    expect(receiptFromReport({ noTools: false })).toEqual({ kind: 'unknown' });
  });

  it('rejects tools reported together with noTools', () => {
    expectEngineError(
      () => receiptFromReport({ tools: ['web_search'], noTools: true }),
      'RECEIPT_CONFLICT',
    );
  });

  it('rejects sources reported together with noTools', () => {
    expectEngineError(
      () => receiptFromReport({ sources: ['https://example.com'], noTools: true }),
      'RECEIPT_CONFLICT',
    );
  });

  it('rejects sources without a tool that returned them', () => {
    expectEngineError(
      () => receiptFromReport({ sources: ['https://example.com'] }),
      'RECEIPT_CONFLICT',
    );
    expectEngineError(
      () => receiptFromReport({ tools: [], sources: ['https://example.com'] }),
      'RECEIPT_CONFLICT',
    );
  });

  it('rejects an empty or blank tool name', () => {
    expectEngineError(() => receiptFromReport({ tools: [''] }), 'INVALID_ARGUMENT');
    expectEngineError(() => receiptFromReport({ tools: ['   '] }), 'INVALID_ARGUMENT');
    expectEngineError(() => receiptFromReport({ tools: ['ok', ''] }), 'INVALID_ARGUMENT');
  });

  it('rejects an empty source', () => {
    expectEngineError(
      () => receiptFromReport({ tools: ['web_search'], sources: [''] }),
      'INVALID_ARGUMENT',
    );
  });

  it('rejects items that could break out of the receipt line', () => {
    expectEngineError(() => receiptFromReport({ tools: ['evil]] injected'] }), 'INVALID_ARGUMENT');
    expectEngineError(() => receiptFromReport({ tools: ['two\nlines'] }), 'INVALID_ARGUMENT');
    expectEngineError(
      () => receiptFromReport({ tools: ['web_search'], sources: ['https://x/]]'] }),
      'INVALID_ARGUMENT',
    );
  });

  it('rejects an overlong tool name', () => {
    expectEngineError(() => receiptFromReport({ tools: ['x'.repeat(2049)] }), 'INVALID_ARGUMENT');
    expect(receiptFromReport({ tools: ['x'.repeat(2048)] }).kind).toBe('tools');
  });

  it('removes duplicate tools and sources, keeping first-seen order', () => {
    expect(
      receiptFromReport({
        tools: ['web_search', 'read_file', 'web_search', ' read_file '],
        sources: ['https://b.example', 'https://a.example', 'https://b.example'],
      }),
    ).toEqual({
      kind: 'tools',
      tools: ['web_search', 'read_file'],
      sources: ['https://b.example', 'https://a.example'],
    });
  });

  it('trims surrounding whitespace from items', () => {
    expect(receiptFromReport({ tools: ['  web_search\t'] })).toEqual({
      kind: 'tools',
      tools: ['web_search'],
      sources: [],
    });
  });
});

describe('renderReceiptLine', () => {
  const tools: Receipt = {
    kind: 'tools',
    tools: ['web_search', 'read_file'],
    sources: ['https://example.com/a', 'https://example.com/b'],
  };
  const none: Receipt = { kind: 'none' };
  const unknown: Receipt = { kind: 'unknown' };

  it('renders each kind as one line starting with RECEIPT_PREFIX and ending with "]]"', () => {
    for (const receipt of [tools, none, unknown]) {
      const line = renderReceiptLine(receipt);
      expect(line.startsWith(RECEIPT_PREFIX)).toBe(true);
      expect(line.endsWith(']]')).toBe(true);
      expect(line).not.toContain('\n');
      expect(line.indexOf(']]')).toBe(line.length - 2);
    }
  });

  it('renders the three kinds as three different lines', () => {
    const lines = new Set([tools, none, unknown].map(renderReceiptLine));
    expect(lines.size).toBe(3);
  });

  it('keeps a negative receipt distinct from an unknown one', () => {
    const noneLine = renderReceiptLine(none);
    const unknownLine = renderReceiptLine(unknown);
    expect(noneLine).not.toBe(unknownLine);
    expect(noneLine).toMatch(/no tools ran/);
    expect(unknownLine).toMatch(/unknown/);
    expect(noneLine).not.toMatch(/unknown/);
  });

  it('names every tool and source in a tools receipt', () => {
    const line = renderReceiptLine(tools);
    for (const item of [
      'web_search',
      'read_file',
      'https://example.com/a',
      'https://example.com/b',
    ]) {
      expect(line).toContain(item);
    }
  });

  it('says so when a tools receipt has no sources', () => {
    const line = renderReceiptLine({ kind: 'tools', tools: ['read_file'], sources: [] });
    expect(line.startsWith(RECEIPT_PREFIX)).toBe(true);
    expect(line).toContain('read_file');
    expect(line).toContain('none returned');
    expect(line).not.toBe(renderReceiptLine(none));
  });

  it('renders a line the imitation stripper recognises as a receipt', () => {
    for (const receipt of [tools, none, unknown]) {
      const line = renderReceiptLine(receipt);
      expect(stripImitatedReceipts(`Answer.\n${line}`)).toEqual({ text: 'Answer.', removed: 1 });
    }
  });

  it('round-trips a host report into the expected line', () => {
    expect(renderReceiptLine(receiptFromReport({ noTools: true }))).toBe(renderReceiptLine(none));
    expect(renderReceiptLine(receiptFromReport(undefined))).toBe(renderReceiptLine(unknown));
  });
});

describe('receiptReportFromBlocks', () => {
  it('collects tools from server_tool_use and sources from results and citations', () => {
    const blocks: ResponseBlock[] = [
      { type: 'text', text: 'Let me look that up.' },
      {
        type: 'server_tool_use',
        id: 'srvtoolu_1',
        name: 'web_search',
        input: { query: 'reykjavik weather' },
      },
      {
        type: 'web_search_tool_result',
        tool_use_id: 'srvtoolu_1',
        content: [
          { type: 'web_search_result', url: 'https://www.wunderground.com/r', title: 'WU' },
          { type: 'web_search_result', url: 'https://weather.example/r', title: 'Other' },
        ],
      },
      { type: 'text', text: 'The temperature is ' },
      {
        type: 'text',
        text: '86°F',
        citations: [
          {
            type: 'web_search_result_location',
            url: 'https://www.wunderground.com/r',
            cited_text: '86°F',
          },
          {
            type: 'web_search_result_location',
            url: 'https://cited.example/only',
            cited_text: 'x',
          },
        ],
      },
      { type: 'text', text: ', with light winds.' },
    ];
    const report = receiptReportFromBlocks(blocks);
    expect(report.noTools).not.toBe(true);
    expect(report.tools).toEqual(['web_search']);
    expect(report.sources).toEqual([
      'https://www.wunderground.com/r',
      'https://weather.example/r',
      'https://cited.example/only',
    ]);
    expect(receiptFromReport(report)).toEqual({
      kind: 'tools',
      tools: ['web_search'],
      sources: [
        'https://www.wunderground.com/r',
        'https://weather.example/r',
        'https://cited.example/only',
      ],
    });
  });

  it('counts a tool once however many times it ran', () => {
    const report = receiptReportFromBlocks([
      { type: 'server_tool_use', id: 'a', name: 'web_search', input: {} },
      { type: 'web_search_tool_result', tool_use_id: 'a', content: [] },
      { type: 'server_tool_use', id: 'b', name: 'web_search', input: {} },
      { type: 'tool_use', id: 'c', name: 'read_file', input: {} },
      { type: 'text', text: 'Done.' },
    ]);
    expect(report.tools).toEqual(['web_search', 'read_file']);
    expect(report.sources).toEqual([]);
    expect(receiptFromReport(report).kind).toBe('tools');
  });

  it('reports that no tool ran when there are only text blocks', () => {
    expect(
      receiptReportFromBlocks([
        { type: 'text', text: 'Your favourite colour is ' },
        { type: 'text', text: 'chartreuse.' },
      ]),
    ).toEqual({ noTools: true });
    expect(receiptFromReport({ noTools: true })).toEqual({ kind: 'none' });
  });

  it('treats text blocks with empty citations as no tool', () => {
    expect(receiptReportFromBlocks([{ type: 'text', text: 'Hi.', citations: [] }])).toEqual({
      noTools: true,
    });
  });
});
