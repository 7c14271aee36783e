// Claude's memory tool (`memory_20250818`) over memledger: live memory as files under /memories,
// writes as proposals through the gate, deletes and renames as requests for the owner.
import { betaMemoryTool, type MemoryToolHandlers } from '@anthropic-ai/sdk/helpers/beta/memory';
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import type { BetaRunnableTool } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool';
import type { BetaMemoryTool20250818Command } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { Fact, Proposal, ProposeResult } from '../../src/index.js';
import {
  quoteFoundIn,
  renderFactLine,
  renderForgetAnswer,
  renderProposeAnswer,
  shownInline,
} from '../../src/rules.js';
import { DEFAULT_SLOTS, SLOT_NAME } from '../../src/domain/fact.js';
import { asksToForget } from '../../src/domain/forget-policy.js';
import { requireId } from '../../src/domain/turn.js';
import {
  agentMemoryOf,
  type AgentMemory,
  type MemoryTarget,
  type MemoryTurn,
} from '../agent-memory.js';

/** The directory the memory tool shows. */
export const MEMORY_ROOT = '/memories';

/**
 * How the model writes to memledger's memory: put it in the system prompt beside the memory tool
 * (viewing /memories shows it too). A line the model writes is a proposal, never a save.
 */
export const MEMORY_TOOL_GUIDE = [
  'Memory (memledger): /memories holds one file per slot (what_i_know_about_user.md, stances.md, corrections_received.md); each line is a live fact the owner approved, shown with its passport (origin, date). Nothing unapproved is shown, and nothing you write is saved as it is.',
  'Each line you create, insert or str_replace must cite the user\u2019s own words from one of their messages:',
  '  The user prefers tea to coffee. <<quote: "I always take tea, never coffee" turn 3>>',
  '(turn N is the number of the user\u2019s message; leave it out and memledger looks for the words in this conversation). Your own replies are never evidence. Every line becomes a proposal that waits for the owner\u2019s review; the answer says what waits and what was dropped, and why.',
  'delete asks the owner to forget: it needs the user\u2019s own words asking for it in their latest message (or, in str_replace, new_str holding only <<quote: "their words asking" turn N>> in place of the fact\u2019s words). rename asks the owner to move a file\u2019s facts to another slot. Neither changes anything until the owner decides.',
].join('\n');

/** The most lines one create or insert may propose. */
const MAX_LINES = 100;
/** The most forget requests one delete files (one per live fact of the file). */
const MAX_FORGETS = 50;
/**
 * How many of the session's last turns a citation without a turn number is looked for in (at most
 * the HTTP face's page of turns).
 */
const CITATION_WINDOW = 200;
/** The longest message the arrival recalls for (the engine refuses longer). */
export const MAX_ARRIVAL_MESSAGE = 20_000;
/** The text of an assistant turn whose reply ran tools but said nothing (a turn needs text). */
export const NO_REPLY_TEXT = '(no reply text: this turn only ran tools)';
/** The width of a line number in a view, as Claude's own memory tool prints it. */
const LINE_NUMBER_WIDTH = 6;

/** A memory error as the tool's error result: its code first, so the model can act on it. */
function refused(code: string, message: string): ToolError {
  return new ToolError(`${code}: ${message}`);
}

export const codeOf = (err: unknown): string | null => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z][A-Z_]+$/.test(code) ? code : null;
};

/** Runs a handler; a memory error becomes an error result naming its code. */
async function answering(fn: () => Promise<string>): Promise<string> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ToolError) throw err;
    const code = codeOf(err);
    if (code !== null) throw refused(code, (err as Error).message);
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Paths

type MemoryPath = { kind: 'root' } | { kind: 'file'; slot: string; path: string };

/**
 * A path the model names: /memories itself, or one file directly in it named for a slot. Anything
 * else is refused before memory is read: no `..` or `.`, no folders, nothing outside /memories,
 * no escapes (`%`, `\`), controls or look-alikes. Nothing here touches a file system.
 */
export function memoryPath(raw: unknown, field = 'path'): MemoryPath {
  if (typeof raw !== 'string' || raw.length === 0) {
    throw refused('INVALID_ARGUMENT', `${field} must name a path under ${MEMORY_ROOT}`);
  }
  const shown = JSON.stringify(shownInline(raw.slice(0, 200)));
  if (raw.length > 300 || /[\p{Cc}\p{Cf}\\%]/u.test(raw)) {
    throw refused(
      'INVALID_ARGUMENT',
      `${field} ${shown} is refused: a memory path is /memories/<slot>.md, in plain characters`,
    );
  }
  if (raw.split('/').some((s) => s === '..' || s === '.')) {
    throw refused(
      'INVALID_ARGUMENT',
      `${field} ${shown} is refused: "." and ".." are never followed (path traversal); memory is the files directly in ${MEMORY_ROOT}`,
    );
  }
  if (raw === MEMORY_ROOT || raw === `${MEMORY_ROOT}/`) return { kind: 'root' };
  if (!raw.startsWith(`${MEMORY_ROOT}/`)) {
    throw refused(
      'INVALID_ARGUMENT',
      `${field} ${shown} is outside ${MEMORY_ROOT}: memory is only the files in ${MEMORY_ROOT}`,
    );
  }
  const name = raw.slice(MEMORY_ROOT.length + 1);
  if (name.includes('/')) {
    throw refused(
      'INVALID_ARGUMENT',
      `${field} ${shown} is refused: ${MEMORY_ROOT} has no folders, one file per slot`,
    );
  }
  const slot = name.endsWith('.md') ? name.slice(0, -3) : name;
  if (!SLOT_NAME.test(slot)) {
    throw refused(
      'INVALID_ARGUMENT',
      `${field} ${shown} is not a memory file: each file is a slot, named like ${MEMORY_ROOT}/what_i_know_about_user.md (a-z, 0-9 and _, then .md)`,
    );
  }
  return { kind: 'file', slot, path: `${MEMORY_ROOT}/${slot}.md` };
}

function fileOf(raw: unknown, field = 'path'): { slot: string; path: string } {
  const p = memoryPath(raw, field);
  if (p.kind === 'root') {
    throw refused(
      'INVALID_ARGUMENT',
      `${field} is ${MEMORY_ROOT} itself: name one file in it (one file per slot)`,
    );
  }
  return p;
}

// ---------------------------------------------------------------------------------------------
// Reading: live facts as files

/** The slots a fresh subject offers proposals into (a summary aspect takes none). */
const OFFERED_SLOTS = DEFAULT_SLOTS.filter((s) => s.rule !== 'summary').map((s) => s.name);

/** Live facts only: active and verified where they were read (a withheld fact is never shown). */
async function liveBySlot(me: AgentMemory): Promise<Map<string, Fact[]>> {
  const facts = (await me.liveFacts()).filter(
    (f) => f.status === 'active' && f.integrity === undefined,
  );
  facts.sort(
    (a, b) =>
      a.recordedAt.getTime() - b.recordedAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  const out = new Map<string, Fact[]>();
  for (const f of facts) out.set(f.slot, [...(out.get(f.slot) ?? []), f]);
  return out;
}

const lineOf = (f: Fact): string => renderFactLine(f);

function fileText(facts: readonly Fact[]): string {
  return facts.map(lineOf).join('\n');
}

function size(text: string | number): string {
  const bytes = typeof text === 'number' ? text : Buffer.byteLength(text, 'utf8');
  return bytes < 1024 ? `${bytes}B` : `${(bytes / 1024).toFixed(1)}K`;
}

const numbered = (lines: readonly string[], first: number): string[] =>
  lines.map((l, i) => `${String(first + i).padStart(LINE_NUMBER_WIDTH, ' ')}\t${l}`);

async function viewRoot(me: AgentMemory): Promise<string> {
  const live = await liveBySlot(me);
  const slots = [...new Set([...OFFERED_SLOTS, ...live.keys()])].sort();
  const files = slots.map((s) => ({
    path: `${MEMORY_ROOT}/${s}.md`,
    text: fileText(live.get(s) ?? []),
  }));
  const all = files.reduce((n, f) => n + Buffer.byteLength(f.text, 'utf8'), 0);
  return [
    `Here're the files in ${MEMORY_ROOT} (memledger: one file per slot, each line a live fact the owner approved, with its passport):`,
    `${size(all)}\t${MEMORY_ROOT}`,
    ...files.map((f) => `${size(f.text)}\t${f.path}`),
    '',
    MEMORY_TOOL_GUIDE,
  ].join('\n');
}

function viewRange(range: unknown, count: number): { from: number; to: number } {
  if (range === undefined || range === null) return { from: 1, to: count };
  const bad = () =>
    refused(
      'INVALID_ARGUMENT',
      `view_range must be [first, last] line numbers (last -1 for the end); the file has ${count} line(s)`,
    );
  if (!Array.isArray(range) || range.length !== 2) throw bad();
  const [from, to] = range as unknown[];
  if (typeof from !== 'number' || typeof to !== 'number') throw bad();
  if (!Number.isInteger(from) || !Number.isInteger(to) || from < 1) throw bad();
  const last = to === -1 ? count : to;
  if (last < from - 1 || last > count) throw bad();
  return { from, to: last };
}

async function viewFile(
  me: AgentMemory,
  file: { slot: string; path: string },
  range: unknown,
): Promise<string> {
  const facts = (await liveBySlot(me)).get(file.slot) ?? [];
  const lines = facts.map(lineOf);
  const { from, to } = viewRange(range, lines.length);
  if (lines.length === 0) {
    return `Here's the content of ${file.path} with line numbers:\n(no live facts: nothing the owner approved is in slot ${file.slot} yet)`;
  }
  return `Here's the content of ${file.path} with line numbers:\n${numbered(lines.slice(from - 1, to), from).join('\n')}`;
}

// ---------------------------------------------------------------------------------------------
// Writing: every line a proposal through the gate

/** `<<quote: "the user's words" turn 3>>`: the citation a line carries (turn optional). */
const CITATION = /<<\s*quote\s*:\s*["\u201C](.*?)["\u201D]\s*(?:,?\s*turn\s*#?\s*(\d+)\s*)?>>/gis;
/** A line that begins with a passport: memledger writes those, never the model. */
const PASSPORT = /^\s*(?:\[[A-Z]+\]\s*)?\((?:did|saw|inferred|summarized|turn)\b/i;
/** A line number as a view prints it, which a model may copy back. */
const VIEW_NUMBER = /^\s*\d+\t/;

interface Citation {
  quote: string;
  turn: number | undefined;
}

function citationsIn(line: string): { text: string; citations: Citation[] } {
  const citations: Citation[] = [];
  const text = line
    .replace(CITATION, (_m, quote: string, turn: string | undefined) => {
      citations.push({ quote, turn: turn === undefined ? undefined : Number(turn) });
      return ' ';
    })
    .replace(/\s+/g, ' ')
    .trim();
  return { text, citations };
}

/** One line the model wrote: a proposal to send, or why it was not sent. */
type PlannedLine =
  { line: number; proposal: Proposal; citation: Citation | null } | { line: number; note: string };

function planLines(
  slot: string,
  text: string,
  live: readonly Fact[],
  key?: string | null,
): PlannedLine[] {
  const liveLines = new Set(live.map(lineOf));
  const liveTexts = new Set(live.map((f) => shownInline(f.text)));
  const out: PlannedLine[] = [];
  const lines = text.split('\n');
  lines.forEach((rawLine, i) => {
    const line = i + 1;
    const raw = rawLine.replace(/\r$/, '').replace(VIEW_NUMBER, '');
    if (raw.trim() === '') return;
    if (raw.trimStart().startsWith('#')) {
      out.push({ line, note: 'a heading, not a memory: left out' });
      return;
    }
    if (liveLines.has(raw.trim()) || liveTexts.has(raw.trim())) {
      out.push({ line, note: 'already live in this file: unchanged' });
      return;
    }
    if (PASSPORT.test(raw)) {
      out.push({
        line,
        note: 'begins with a passport, which memledger writes: write only the memory and its <<quote: …>> (not sent)',
      });
      return;
    }
    const { text: words, citations } = citationsIn(raw);
    if (citations.length > 1) {
      out.push({ line, note: 'cites more than one quote: one <<quote: …>> per line (not sent)' });
      return;
    }
    if (words === '') {
      out.push({ line, note: 'a citation with no memory before it (not sent)' });
      return;
    }
    const citation = citations[0] ?? null;
    const evidence =
      citation === null
        ? undefined
        : {
            quote: citation.quote,
            ...(citation.turn === undefined ? {} : { turn: citation.turn }),
          };
    out.push({
      line,
      citation,
      proposal: {
        slot,
        text: words,
        origin: 'saw',
        ...(key === undefined || key === null ? {} : { key }),
        ...(evidence === undefined ? {} : { evidence }),
      },
    });
  });
  if (out.length > MAX_LINES) {
    throw refused('INVALID_ARGUMENT', `at most ${MAX_LINES} lines at a time (${out.length} given)`);
  }
  return out;
}

/** The user turns of the session, newest first (the last CITATION_WINDOW turns). */
async function userTurns(me: AgentMemory, sessionId: string): Promise<MemoryTurn[]> {
  return (await me.turns(sessionId, CITATION_WINDOW)).filter((t) => t.role === 'user').reverse();
}

/**
 * Proposes the planned lines in one batch. A citation without a turn number names the newest user
 * turn of the session that says the words; when none does, the newest user turn, which the gate
 * then drops as QUOTE_NOT_FOUND (the words were never said).
 */
async function proposeLines(
  me: AgentMemory,
  sessionId: string,
  planned: readonly PlannedLine[],
): Promise<{ result: ProposeResult | null; notes: string[] }> {
  const notes: string[] = [];
  const proposals: Proposal[] = [];
  let turns: MemoryTurn[] | null = null;
  for (const p of planned) {
    if ('note' in p) {
      notes.push(`line ${p.line}: ${p.note}`);
      continue;
    }
    const { proposal, citation } = p;
    if (citation !== null && citation.turn === undefined) {
      turns ??= await userTurns(me, sessionId);
      const said = turns.find((t) => quoteFoundIn(citation.quote, t.content));
      const turn = said ?? turns[0];
      if (said === undefined)
        notes.push(`line ${p.line}: no user message of this session says these words`);
      if (turn !== undefined) {
        proposals.push({ ...proposal, evidence: { quote: citation.quote, turn: turn.seq } });
        continue;
      }
    }
    if (citation === null) {
      notes.push(
        `line ${p.line}: cites no words of the user (add <<quote: "their words" turn N>>)`,
      );
    }
    proposals.push(proposal);
  }
  if (proposals.length === 0) return { result: null, notes };
  return { result: await me.propose({ sessionId, proposals }), notes };
}

function answer(
  result: ProposeResult | null,
  notes: readonly string[],
  tail: readonly string[] = [],
): string {
  if (result === null) {
    throw refused(
      'INVALID_ARGUMENT',
      ['Nothing was proposed.', ...notes, '', MEMORY_TOOL_GUIDE].join('\n'),
    );
  }
  return [renderProposeAnswer(result), ...(notes.length > 0 ? ['', ...notes] : []), ...tail].join(
    '\n',
  );
}

// ---------------------------------------------------------------------------------------------
// Forgetting: a request, with the user's words asking

/** The sentences of a text, as written (the forget cue reader's split). */
const sentencesOf = (s: string): string[] =>
  s
    .split(/(?<=[.!?;\n])\s*/)
    .map((x) => x.trim())
    .filter((x) => x !== '');

/**
 * The user's words asking to forget, in their latest message of the session: the last sentence of
 * it that asks (memledger's forget cue reader: "please forget…", never "don't forget…" or "how do
 * I delete…"), or null.
 */
async function askingWords(
  me: AgentMemory,
  sessionId: string,
): Promise<{ turn: number; quote: string } | null> {
  const latest = (await userTurns(me, sessionId))[0];
  if (latest === undefined) return null;
  const asking = sentencesOf(latest.content).filter((s) => asksToForget(s));
  const quote = asking.at(-1);
  return quote === undefined ? null : { turn: latest.seq, quote };
}

/** The words a str_replace cites in place of a fact's: a user turn of the session must say them. */
async function citedWords(
  me: AgentMemory,
  sessionId: string,
  cited: Citation,
): Promise<{ turn: number; quote: string }> {
  const turn =
    cited.turn ??
    (await userTurns(me, sessionId)).find((t) => quoteFoundIn(cited.quote, t.content))?.seq;
  if (turn === undefined) {
    throw refused(
      'INVALID_ARGUMENT',
      `no user message of this session says "${shownInline(cited.quote)}": nothing was requested`,
    );
  }
  return { turn, quote: cited.quote };
}

const NEEDS_WORDS = (what: string) =>
  [
    `Nothing was deleted and nothing was requested: forgetting ${what} is the owner's, at the user's request, and a request needs the user's own words asking for it.`,
    'Their latest message does not ask to forget anything. Ask the user whether they want it forgotten; once they have said so in their own words (for example "please forget where I live"), call delete again.',
    'To cite words they said earlier, use str_replace on the fact\u2019s line with new_str holding only <<quote: "their words asking" turn N>>.',
  ].join('\n');

async function requestForgets(
  me: AgentMemory,
  sessionId: string,
  facts: readonly Fact[],
  words: { turn: number; quote: string },
): Promise<string> {
  const lines: string[] = [];
  for (const f of facts.slice(0, MAX_FORGETS)) {
    const filed = await me.requestForget({
      sessionId,
      turn: words.turn,
      quote: words.quote,
      scope: { kind: 'fact', fact: f.id },
    });
    lines.push(`${lineOf(f)}\n  ${renderForgetAnswer(filed)}`);
  }
  if (facts.length > MAX_FORGETS) {
    lines.push(
      `${facts.length - MAX_FORGETS} more line(s) were not requested: at most ${MAX_FORGETS} at a time.`,
    );
  }
  lines.push(
    `Cited: turn ${words.turn}, "${shownInline(words.quote)}". A fact stays live, and in its file, until the owner honours the request.`,
  );
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// The tool

/** What the memory tool is bound to. */
export interface MemoryToolOptions {
  /** The session whose user turns the model's citations point into (it must exist). */
  sessionId: string;
}

/** The handlers of Claude's memory tool over memledger (`betaMemoryTool(handlers)`). */
export function memledgerMemoryHandlers(
  memory: MemoryTarget,
  options: MemoryToolOptions,
): MemoryToolHandlers {
  const me = agentMemoryOf(memory);
  const sessionId = requireId(options.sessionId, 'session');

  return {
    view: (c) =>
      answering(async () => {
        const p = memoryPath(c.path);
        return p.kind === 'root' ? viewRoot(me) : viewFile(me, p, c.view_range);
      }),

    create: (c) =>
      answering(async () => {
        const file = fileOf(c.path);
        if (typeof c.file_text !== 'string')
          throw refused('INVALID_ARGUMENT', 'file_text must be text');
        const live = (await liveBySlot(me)).get(file.slot) ?? [];
        const { result, notes } = await proposeLines(
          me,
          sessionId,
          planLines(file.slot, c.file_text, live),
        );
        return answer(result, notes, [
          `${file.path} is unchanged: it shows only what the owner approved. create never removes a live line (delete asks the owner for that).`,
        ]);
      }),

    insert: (c) =>
      answering(async () => {
        const file = fileOf(c.path);
        if (typeof c.insert_text !== 'string')
          throw refused('INVALID_ARGUMENT', 'insert_text must be text');
        const live = (await liveBySlot(me)).get(file.slot) ?? [];
        const at = c.insert_line;
        if (typeof at !== 'number' || !Number.isInteger(at) || at < 0 || at > live.length) {
          throw refused(
            'INVALID_ARGUMENT',
            `insert_line must be within the file's lines [0, ${live.length}]`,
          );
        }
        const { result, notes } = await proposeLines(
          me,
          sessionId,
          planLines(file.slot, c.insert_text, live),
        );
        return answer(result, notes, [
          `${file.path} is unchanged: it shows only what the owner approved (a line's place in it is memledger's).`,
        ]);
      }),

    str_replace: (c) =>
      answering(async () => {
        const file = fileOf(c.path);
        if (typeof c.old_str !== 'string' || c.old_str === '' || typeof c.new_str !== 'string') {
          throw refused('INVALID_ARGUMENT', 'old_str (not empty) and new_str must be text');
        }
        const live = (await liveBySlot(me)).get(file.slot) ?? [];
        const inText = live.filter((f) => shownInline(f.text).includes(c.old_str));
        if (inText.length === 0) {
          const inLine = live.some((f) => lineOf(f).includes(c.old_str));
          throw refused(
            'INVALID_ARGUMENT',
            inLine
              ? `old_str touches a line's passport or slot, which memledger writes: old_str must be words of the fact itself`
              : `old_str did not appear verbatim in ${file.path} (it shows only live facts)`,
          );
        }
        if (inText.length > 1) {
          const at = inText.map((f) => live.indexOf(f) + 1);
          throw refused(
            'INVALID_ARGUMENT',
            `old_str appears in lines ${at.join(', ')} of ${file.path}: make it unique`,
          );
        }
        const fact = inText[0] as Fact;
        const edited = shownInline(fact.text).replace(c.old_str, () => c.new_str);
        const { text: words, citations } = citationsIn(edited);
        if (words === '') {
          // the fact's words removed: a request to forget it
          if (citations.length > 1) {
            throw refused(
              'INVALID_ARGUMENT',
              'cite one quote: the user\u2019s words asking to forget',
            );
          }
          const cited = citations[0];
          const asking =
            cited === undefined
              ? await askingWords(me, sessionId)
              : await citedWords(me, sessionId, cited);
          if (asking === null) throw refused('INVALID_ARGUMENT', NEEDS_WORDS('a fact'));
          return requestForgets(me, sessionId, [fact], asking);
        }
        const planned = planLines(file.slot, edited, [], fact.key);
        const { result, notes } = await proposeLines(me, sessionId, planned);
        return answer(result, notes, [
          fact.key === null
            ? `It is proposed beside the live line ${JSON.stringify(lineOf(fact))}, which stays live: if the owner approves it, the owner decides whether it replaces that line.`
            : `It is proposed as the new value of ${fact.slot}.${fact.key}: approved by the owner, it supersedes the live line ${JSON.stringify(lineOf(fact))}, which stays live until then.`,
        ]);
      }),

    delete: (c) =>
      answering(async () => {
        const p = memoryPath(c.path);
        if (p.kind === 'root') {
          throw refused(
            'INVALID_ARGUMENT',
            `${MEMORY_ROOT} itself cannot be deleted; nothing was deleted or requested`,
          );
        }
        const facts = (await liveBySlot(me)).get(p.slot) ?? [];
        if (facts.length === 0) {
          return `${p.path} holds no live fact: there is nothing to forget, and nothing was requested.`;
        }
        const words = await askingWords(me, sessionId);
        if (words === null) throw refused('INVALID_ARGUMENT', NEEDS_WORDS(`what ${p.path} holds`));
        return requestForgets(me, sessionId, facts, words);
      }),

    rename: (c) =>
      answering(async () => {
        const from = fileOf(c.old_path, 'old_path');
        const to = fileOf(c.new_path, 'new_path');
        if (from.slot === to.slot) {
          throw refused('INVALID_ARGUMENT', 'old_path and new_path name the same file');
        }
        const facts = (await liveBySlot(me)).get(from.slot) ?? [];
        if (facts.length === 0) {
          throw refused('INVALID_ARGUMENT', `${from.path} holds no live fact: nothing to move`);
        }
        // each fact proposed again into the new slot, on its own evidence: the gate checks it
        // again against the turn it cites, and the owner decides
        const bySession = new Map<string, Proposal[]>();
        const notMoved: string[] = [];
        for (const f of facts) {
          const e = f.evidence;
          if (e.sessionId === null || e.seq === null || e.quote === null) {
            notMoved.push(`not proposed (a ${f.origin} fact cites no user words): ${lineOf(f)}`);
            continue;
          }
          bySession.set(e.sessionId, [
            ...(bySession.get(e.sessionId) ?? []),
            {
              slot: to.slot,
              text: f.text,
              origin: f.origin,
              ...(f.key === null ? {} : { key: f.key }),
              evidence: { turn: e.seq, quote: e.quote },
            },
          ]);
        }
        const merged: ProposeResult = { proposed: [], dropped: [] };
        for (const [session, proposals] of bySession) {
          const r = await me.propose({ sessionId: session, proposals });
          merged.proposed.push(...r.proposed);
          merged.dropped.push(...r.dropped);
        }
        return [
          renderProposeAnswer(merged),
          ...notMoved,
          `A move is the owner's: the lines of ${from.path} stay live, and those proposed for ${to.path} wait for the owner's review.`,
        ].join('\n');
      }),
  };
}

/**
 * Claude's memory tool (`memory_20250818`) over memledger, for `client.beta.messages.toolRunner`
 * (or `tool.run(input)` in a loop of your own). Reads show verified live facts; writes are
 * proposals and requests; nothing it does makes memory live or removes it.
 */
export function memledgerMemoryTool(
  memory: MemoryTarget,
  options: MemoryToolOptions,
): BetaRunnableTool<BetaMemoryTool20250818Command> {
  return betaMemoryTool(memledgerMemoryHandlers(memory, options));
}
