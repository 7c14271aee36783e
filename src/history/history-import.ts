import { isEngineError, type ErrorCode } from '../domain/errors.js';
import type {
  ImportedConversation,
  ImportedTurn,
} from '../domain/history-import/imported-conversation.js';
import { invalidField, optionalString } from '../domain/input.js';
import { requireId, type Turn } from '../domain/turn.js';
import { detectUtility } from '../domain/utility.js';
import type { ModuleDeps } from '../store/module-deps.js';
import { SessionSql } from '../store/session-sql.js';
import { TurnSql } from '../store/turn-sql.js';
import { UsageSql } from '../store/usage-sql.js';
import { stripImitatedReceipts } from './receipt-strip.js';
import { joinTextBlocks } from './text-join.js';
import type { ImportConversationsOptions, ImportConversationsResult } from './history-types.js';
import { TurnRecorder } from './turn-recorder.js';

export interface HistoryImportDeps extends ModuleDeps {
  afterInsert?: (turn: Turn, indexedTurns: number) => Promise<void>;
}

/** Failures of the store itself end the import; anything else skips one conversation. */
const FATAL: ReadonlySet<ErrorCode> = new Set([
  'STORE_ERROR',
  'DB_UNUSABLE',
  'ENGINE_CLOSED',
  'HOST_LOST',
  'SUBJECT_NOT_FOUND',
]);

interface PlannedTurn {
  turn: ImportedTurn;
  content: string;
  /** The text the store keeps (imitated receipts cut from replies): what a re-import compares. */
  stored: string;
}

class Skip extends Error {}

/** The turns a conversation records, in order; utility generations never become turns. */
function plan(c: ImportedConversation): PlannedTurn[] {
  if (!Array.isArray(c.turns)) throw new Skip('its turns are not a list');
  const out: PlannedTurn[] = [];
  c.turns.forEach((turn, i) => {
    const blocks: unknown = (turn as Partial<ImportedTurn> | null)?.blocks;
    if (
      !Array.isArray(blocks) ||
      !blocks.every((b) => typeof b === 'object' && b !== null && typeof b.type === 'string')
    ) {
      throw new Skip(`turn ${i + 1} has no list of text blocks`);
    }
    const content = joinTextBlocks(turn.blocks);
    if (detectUtility(content, turn.utility === true) !== null) return;
    const stored = turn.role === 'assistant' ? stripImitatedReceipts(content).text : content;
    out.push({ turn, content, stored });
  });
  return out;
}

/** Where the session's turns stop agreeing with the conversation's, or -1. */
function firstDifference(held: readonly Turn[], planned: readonly PlannedTurn[]): number {
  const n = Math.min(held.length, planned.length);
  for (let i = 0; i < n; i += 1) {
    const h = held[i]!;
    const p = planned[i]!;
    // a forgotten turn stays forgotten: its place matches whatever the export says there
    if (h.forgotten !== undefined) continue;
    if (h.role !== p.turn.role || h.content !== p.stored) return i;
  }
  return -1;
}

/**
 * Records exported conversations as sessions and turns through the TurnRecorder, one
 * transaction per conversation: a conversation whose turn fails validation is skipped whole with
 * the reason. Idempotent: a session holding the conversation's turns records nothing; one holding
 * a prefix of them gets the rest appended.
 */
export function createHistoryImporter(deps: HistoryImportDeps) {
  const { client, clock } = deps;
  const sessions = new SessionSql(client);
  const turnSql = new TurnSql(client);

  async function importOne(
    subjectId: string,
    c: ImportedConversation,
    result: ImportConversationsResult,
  ): Promise<void> {
    if (typeof c !== 'object' || c === null) throw new Skip('it is not a conversation');
    let id: string;
    try {
      id = requireId(c.key, 'session');
    } catch (err) {
      throw new Skip(`its key is not a session id: ${(err as Error).message}`);
    }
    const planned = plan(c);
    if (planned.length === 0) throw new Skip('it holds no turns to import');
    const existing = await sessions.ofSubject(subjectId, id);
    const held = existing === null ? [] : await turnSql.listBySession(subjectId, id);
    const differs = firstDifference(held, planned);
    if (differs >= 0) {
      throw new Skip(
        `session ${id} holds other turns from turn ${held[differs]!.seq} on; nothing recorded`,
      );
    }
    // the conversation's turns the session does not hold yet
    const missing = planned.slice(held.length);
    if (missing.length === 0) {
      result.unchanged += 1;
      return;
    }
    const now = clock();
    const indexed: Array<[Turn, number]> = [];
    const recorded = await client.transaction(async (tx) => {
      if (existing === null) {
        const title = optionalString(c.title, 'title')?.trim() ?? '';
        const start = c.createdAt ?? planned[0]!.turn.at ?? now;
        await new SessionSql(tx).create({
          id,
          subjectId,
          title: title === '' ? null : title,
          at: start instanceof Date && start.getTime() <= now.getTime() ? start : now,
        });
      }
      const recorder = new TurnRecorder({
        turns: new TurnSql(tx),
        usage: new UsageSql(tx),
        clock: () => now,
        newId: deps.newId,
        // store maintenance runs after the commit, never inside the transaction
        afterInsert: async (turn, n) => void indexed.push([turn, n]),
        ...(deps.wroteNeutral === undefined ? {} : { wroteNeutral: deps.wroteNeutral }),
      });
      let count = 0;
      for (const [i, p] of missing.entries()) {
        const seq = held.length + i + 1;
        let added;
        try {
          added = await recorder.add(subjectId, {
            sessionId: id,
            role: p.turn.role,
            content: p.content,
            ...(p.turn.receipt === undefined ? {} : { receipt: p.turn.receipt }),
            ...(p.turn.speaker === undefined ? {} : { speaker: p.turn.speaker }),
            ...(p.turn.at === undefined ? {} : { at: p.turn.at }),
          });
        } catch (err) {
          if (isEngineError(err) && !FATAL.has(err.code)) {
            throw new Skip(`turn ${seq}: ${err.message}; nothing recorded`);
          }
          throw err;
        }
        // another writer appended to the session since it was read: this import is not the
        // continuation it looked like
        if (added.recorded && added.turn.seq !== seq) {
          throw new Skip(`session ${id} changed while it was imported; nothing recorded`);
        }
        count += 1;
      }
      return count;
    });
    for (const [turn, n] of indexed) await deps.afterInsert?.(turn, n).catch(() => undefined);
    if (existing === null) result.sessions += 1;
    else result.grown += 1;
    result.turns += recorded;
  }

  return {
    async importConversations(
      subjectId: string,
      conversations: readonly ImportedConversation[],
      options: ImportConversationsOptions = {},
    ): Promise<ImportConversationsResult> {
      if (!Array.isArray(conversations)) {
        throw invalidField('conversations', 'must be a list of conversations');
      }
      const result: ImportConversationsResult = {
        sessions: 0,
        grown: 0,
        turns: 0,
        unchanged: 0,
        skipped: [],
      };
      for (const [i, c] of conversations.entries()) {
        try {
          await importOne(subjectId, c, result);
        } catch (err) {
          if (!(err instanceof Skip)) throw err;
          const key: unknown = (c as Partial<ImportedConversation> | null)?.key;
          result.skipped.push({
            conversation: typeof key === 'string' ? key : `#${i + 1}`,
            reason: err.message,
          });
        }
        options.onProgress?.({
          done: i + 1,
          total: conversations.length,
          sessionId: typeof c?.key === 'string' ? c.key : '',
        });
      }
      return result;
    },
  };
}
