import { EngineError } from './errors.js';
import { INPUT_LIMITS, stringProblem } from './input.js';
import { shownText } from './shown-text.js';

/**
 * What the host reports about the tools behind one assistant turn. `none` is evidence that no
 * tool ran; `unknown` is the absence of any evidence. The two must never collapse into one.
 */
export type Receipt =
  { kind: 'tools'; tools: string[]; sources: string[] } | { kind: 'none' } | { kind: 'unknown' };

/** The kinds of receipt: tools ran, no tools ran, or nothing is known. */
export const RECEIPT_KINDS = ['tools', 'none', 'unknown'] as const;
/** One of `RECEIPT_KINDS`. */
export type ReceiptKind = (typeof RECEIPT_KINDS)[number];

/** The host's own report (CLI `--tools`, `--sources`, `--no-tools`); never parsed from model text. */
export interface HostReceiptReport {
  tools?: readonly string[];
  sources?: readonly string[];
  noTools?: boolean;
}

const MAX_ITEM_LENGTH = INPUT_LIMITS.toolLength;

function cleanList(values: readonly string[] | undefined, what: string): string[] {
  if (values === undefined) return [];
  if (values.length > INPUT_LIMITS.listItems) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `a receipt lists at most ${INPUT_LIMITS.listItems} of each kind (too many: ${what})`,
    );
  }
  const out: string[] = [];
  for (const raw of values) {
    const value = raw.trim();
    if (value.length === 0) throw new EngineError('INVALID_ARGUMENT', `${what} must not be empty`);
    if (value.length > MAX_ITEM_LENGTH) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        `${what} is longer than ${MAX_ITEM_LENGTH} characters`,
      );
    }
    if (/[\r\n]|\]\]/.test(value)) {
      throw new EngineError('INVALID_ARGUMENT', `${what} must not contain a newline or "]]"`);
    }
    const problem = stringProblem(value, MAX_ITEM_LENGTH);
    if (problem !== null) throw new EngineError('INVALID_ARGUMENT', `${what} ${problem}`);
    if (!out.includes(value)) out.push(value);
  }
  return out;
}

/** Turns a host report into the receipt to store; throws on a report that contradicts itself. */
/** A report of the wrong shape (not an object, a tool list that is a string…) is INVALID_ARGUMENT. */
export function checkReportShape(report: unknown): asserts report is HostReceiptReport | undefined {
  if (report === undefined) return;
  const bad = (field: string, what: string) =>
    new EngineError('INVALID_ARGUMENT', `${field} must be ${what}`, { data: { field } });
  if (typeof report !== 'object' || report === null || Array.isArray(report)) {
    throw bad('receipt', 'an object');
  }
  const r = report as Record<string, unknown>;
  if (r.noTools !== undefined && typeof r.noTools !== 'boolean') {
    throw bad('receipt.noTools', 'true or false');
  }
  for (const field of ['tools', 'sources'] as const) {
    const list = r[field];
    if (list !== undefined && (!Array.isArray(list) || !list.every((v) => typeof v === 'string'))) {
      throw bad(`receipt.${field}`, 'a list of strings');
    }
  }
}

export function receiptFromReport(report: HostReceiptReport | undefined): Receipt {
  checkReportShape(report);
  const tools = cleanList(report?.tools, 'a tool name');
  const sources = cleanList(report?.sources, 'a source');
  const noTools = report?.noTools === true;
  if (noTools && (tools.length > 0 || sources.length > 0)) {
    throw new EngineError(
      'RECEIPT_CONFLICT',
      'a turn cannot report tools and "no tools ran" at once',
    );
  }
  if (sources.length > 0 && tools.length === 0) {
    throw new EngineError(
      'RECEIPT_CONFLICT',
      'sources were reported but no tool that returned them',
    );
  }
  if (noTools) return { kind: 'none' };
  if (tools.length > 0) return { kind: 'tools', tools, sources };
  return { kind: 'unknown' };
}

/** Whether the host reported nothing at all (no tools, no sources, no "no tools ran"). */
export function isEmptyReport(report: HostReceiptReport | undefined): boolean {
  checkReportShape(report);
  return (
    report === undefined ||
    (report.noTools !== true &&
      (report.tools === undefined || report.tools.length === 0) &&
      (report.sources === undefined || report.sources.length === 0))
  );
}

/** How every receipt line begins; a reply that imitates it has the imitation stripped. */
export const RECEIPT_PREFIX = '[[RECEIPT recorded by memledger, not written by the model:';

/**
 * The system-written line that sits beside an assistant turn in rendered history: one line,
 * whatever the stored tool and source names hold (each shown by `shownText`).
 */
export function renderReceiptLine(receipt: Receipt): string {
  switch (receipt.kind) {
    case 'tools': {
      const list = (items: readonly string[]) => items.map((i) => shownText(i)).join(', ');
      const sources = receipt.sources.length > 0 ? list(receipt.sources) : 'none returned';
      return `${RECEIPT_PREFIX} tools ${list(receipt.tools)}; sources ${sources}]]`;
    }
    case 'none':
      return `${RECEIPT_PREFIX} no tools ran on this turn]]`;
    case 'unknown':
      return `${RECEIPT_PREFIX} unknown, the host reported nothing about tools for this turn]]`;
  }
}

/**
 * Whether a receipt's entry names a tool that ran: a call the host saw fail, get no result, or
 * could not verify is entered as `name (error)`, `name (no result)`, `name (unverified)`, and
 * never counts as the tool having run (an action cannot rest on it).
 */
export function callRan(entry: string): boolean {
  return !/ \((?:error|no result|unverified)\)$/.test(entry);
}
