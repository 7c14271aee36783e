import { readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { EngineError } from '../../src/domain/errors.js';
import { parseChatGptExport } from '../../src/domain/history-import/chatgpt-export.js';
import { parseClaudeExport } from '../../src/domain/history-import/claude-export.js';
import {
  HISTORY_FORMATS,
  titleOf,
  type HistoryFormat,
  type HistoryParse,
  type ImportedConversation,
  type SkippedConversation,
} from '../../src/domain/history-import/imported-conversation.js';
import { parseOpenAiMessages } from '../../src/domain/history-import/openai-messages.js';
import { shownInline } from '../../src/domain/shown-text.js';
import { requireId } from '../../src/domain/turn.js';
import { parseTranscript } from '../claude-transcript.js';
import { defineCommand } from '../command.js';
import type { CommandContext } from '../context.js';
import { SUBJECT_OPTION } from '../options.js';

const badInput = (message: string): EngineError =>
  new EngineError('INVALID_ARGUMENT', message, { data: { field: 'path' } });

async function readText(ctx: CommandContext, path: string): Promise<string> {
  try {
    return await ctx.io.readFile(path);
  } catch (err) {
    throw badInput(`cannot read ${path}: ${(err as Error).message}`);
  }
}

/**
 * Reads and parses one export file. The file's text lives only in this frame: it can be
 * collected once the parsed tree exists, so a large export is never held twice over.
 */
async function parseFile(
  ctx: CommandContext,
  from: Exclude<HistoryFormat, 'claude-code'>,
  path: string,
): Promise<HistoryParse> {
  const text = await readText(ctx, path);
  if (from === 'openai-messages') {
    // the whole file name: chat.json and chat.jsonl are two conversations, not one
    return parseOpenAiMessages(text, basename(path));
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw badInput(`${path} is not JSON (a ${from} export is): ${(err as Error).message}`);
  }
  return from === 'chatgpt' ? parseChatGptExport(doc) : parseClaudeExport(doc);
}

/** Claude Code's transcripts under a folder, as it keeps them: `<project>/<session id>.jsonl`. */
async function transcriptFiles(path: string): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch (err) {
    throw badInput(`cannot read ${path}: ${(err as Error).message}`);
  }
  if (info.isFile()) return [path];
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      // subagents' transcripts are other conversations (their entries are sidechains)
      if (e.isDirectory() && e.name !== 'subagents') await walk(join(dir, e.name));
      else if (e.isFile() && e.name.endsWith('.jsonl') && !e.name.startsWith('agent-')) {
        out.push(join(dir, e.name));
      }
    }
  };
  await walk(path);
  if (out.length === 0) {
    throw badInput(
      `no Claude Code transcripts (*.jsonl) under ${path}: this is not a claude-code folder`,
    );
  }
  return out;
}

/** The folder a transcript was written from, as its entries record it. */
function cwdOf(text: string): string | undefined {
  for (const line of text.split('\n', 50)) {
    try {
      const entry = JSON.parse(line) as { cwd?: unknown };
      if (typeof entry.cwd === 'string' && entry.cwd !== '') return entry.cwd;
    } catch {
      // a torn line: the next may say
    }
  }
  return undefined;
}

/**
 * One transcript as a conversation, under the session id the `stop` hook records it with (the
 * transcript's name), so a session the hook recorded and an import of its transcript are one.
 */
function transcriptConversation(
  file: string,
  text: string,
): { conversation: ImportedConversation } | { skipped: SkippedConversation } {
  const id = basename(file, '.jsonl');
  try {
    requireId(id, 'session');
  } catch (err) {
    return { skipped: { conversation: file, reason: (err as Error).message } };
  }
  const parsed = parseTranscript(text);
  if (parsed.turns.length === 0) {
    const why = parsed.malformed > 0 ? `${parsed.malformed} lines are not JSON and ` : '';
    return { skipped: { conversation: id, reason: `${why}it holds no turns to import` } };
  }
  const cwd = cwdOf(text);
  return {
    conversation: {
      key: id,
      title: titleOf(cwd === undefined ? undefined : `Claude Code (${cwd})`, 'Claude Code'),
      createdAt: parsed.turns[0]?.at,
      turns: parsed.turns.map((t) => ({
        role: t.role,
        blocks: [{ type: 'text', text: t.content }],
        at: t.at,
        ...(t.role === 'assistant' ? { receipt: t.receipt } : {}),
      })),
    },
  };
}

interface Totals {
  sessions: number;
  grown: number;
  turns: number;
  unchanged: number;
  skipped: SkippedConversation[];
}

/** A progress line on stderr when it is a terminal (never inside --json output on stdout). */
function progress(ctx: CommandContext): ((done: number, total: number) => void) | undefined {
  if (!ctx.io.stderrIsTTY) return undefined;
  let last = 0;
  return (done, total) => {
    const now = Date.now();
    if (done !== total && now - last < 200) return;
    last = now;
    ctx.io.stderr(`\rimporting: ${done}/${total} conversations\x1b[K${done === total ? '\n' : ''}`);
  };
}

/** `import-history`: exported conversations become sessions and turns (docs/HISTORY-IMPORT.md). */
export const importHistoryCommand = defineCommand({
  path: ['import-history'],
  summary:
    'Imports conversations exported from ChatGPT, Claude, Claude Code or an OpenAI-style messages file as sessions and turns: history, never memory.',
  positionals: ['<path>'],
  options: {
    ...SUBJECT_OPTION,
    from: {
      kind: 'choice',
      choices: HISTORY_FORMATS,
      required: true,
      help: "the export's format: chatgpt or claude (conversations.json), claude-code (a transcript folder), openai-messages (JSON or JSON Lines)",
    },
  },
  notes: ['then `memledger reflect --session <id>` proposes facts from a session through the gate'],
  async run(ctx) {
    const [path] = ctx.positionals;
    if (path === undefined) {
      throw badInput('name the export: memledger import-history --from FORMAT <path>');
    }
    const from = ctx.values.from as HistoryFormat;
    const tick = progress(ctx);
    const totals: Totals = { sessions: 0, grown: 0, turns: 0, unchanged: 0, skipped: [] };
    const add = (r: Totals) => {
      totals.sessions += r.sessions;
      totals.grown += r.grown;
      totals.turns += r.turns;
      totals.unchanged += r.unchanged;
      totals.skipped.push(...r.skipped);
    };
    if (from === 'claude-code') {
      const files = await transcriptFiles(path);
      await ctx.withSubject(ctx.values.subject, async (me) => {
        for (const [i, file] of files.entries()) {
          const one = transcriptConversation(file, await readText(ctx, file));
          if ('skipped' in one) totals.skipped.push(one.skipped);
          else add(await me.history.importConversations([one.conversation]));
          tick?.(i + 1, files.length);
        }
      });
    } else {
      const parsed = await parseFile(ctx, from, path);
      totals.skipped.push(...parsed.skipped);
      const done = await ctx.withSubject(ctx.values.subject, (me) =>
        me.history.importConversations(parsed.conversations, {
          ...(tick === undefined ? {} : { onProgress: (p) => tick(p.done, p.total) }),
        }),
      );
      add(done);
    }
    ctx.print({ from, path, ...totals }, () =>
      [
        `imported ${totals.sessions} new conversation(s) and grew ${totals.grown}: ${totals.turns} turn(s) recorded; ${totals.unchanged} unchanged; ${totals.skipped.length} skipped`,
        ...totals.skipped.map(
          (s) => `  skipped ${shownInline(s.conversation)}: ${shownInline(s.reason)}`,
        ),
        totals.sessions + totals.grown > 0
          ? 'imported turns are history, not memory: `memledger reflect --session <id>` proposes facts from one through the gate'
          : '',
      ]
        .filter((l) => l !== '')
        .join('\n'),
    );
  },
});
