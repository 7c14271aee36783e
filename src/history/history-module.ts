import { invalidField, optionalString, optionalWhole, pageOf } from '../domain/input.js';
import { sessionNotFound, type Session } from '../domain/session.js';
import { requireId, type Turn } from '../domain/turn.js';
import type { ModuleDeps } from '../store/module-deps.js';
import { SessionSql } from '../store/session-sql.js';
import { TurnSql } from '../store/turn-sql.js';
import { UsageSql } from '../store/usage-sql.js';
import type { HistoryApi, HistoryOptions, SessionsApi, TurnsApi } from './history-types.js';
import { createHistoryImporter } from './history-import.js';
import { historyMessages, renderHistory } from './render-history.js';
import { TurnRecorder } from './turn-recorder.js';

export interface HistoryModuleDeps extends ModuleDeps {
  /**
   * Runs after a turn is stored, with the subject's indexed turn count including it (store
   * maintenance); its failure never fails the turn.
   */
  afterInsert?: (turn: Turn, indexedTurns: number) => Promise<void>;
}

export interface HistoryModule {
  sessions(subjectId: string): SessionsApi;
  turns(subjectId: string): TurnsApi;
  history(subjectId: string): HistoryApi;
}

const DEFAULT_SESSION_LIMIT = 100;

/** Sessions, turns and history, each bound to one subject. */
export function createHistoryModule(deps: HistoryModuleDeps): HistoryModule {
  const { client, clock, newId } = deps;
  const sessionSql = new SessionSql(client);
  const turnSql = new TurnSql(client);
  const usageSql = new UsageSql(client);
  const recorder = new TurnRecorder({
    turns: turnSql,
    usage: usageSql,
    clock,
    newId,
    ...(deps.afterInsert === undefined ? {} : { afterInsert: deps.afterInsert }),
    ...(deps.wroteNeutral === undefined ? {} : { wroteNeutral: deps.wroteNeutral }),
  });
  const importer = createHistoryImporter(deps);
  const sessionOf = async (subjectId: string, id: unknown): Promise<Session> => {
    const sessionId = requireId(id, 'session');
    const session = await sessionSql.ofSubject(subjectId, sessionId);
    if (session === null) throw sessionNotFound(sessionId);
    return session;
  };
  const turnsOf = async (subjectId: string, id: unknown, options: HistoryOptions) => {
    const last = optionalWhole(options.last, 'last', 1);
    const from = optionalWhole(options.from, 'from', 1);
    const to = optionalWhole(options.to, 'to', 1);
    if (last !== undefined && (from !== undefined || to !== undefined)) {
      throw invalidField('last', 'cannot be combined with from or to');
    }
    if (from !== undefined && to !== undefined && from > to) {
      throw invalidField('to', `must be at least from (${from})`);
    }
    const session = await sessionOf(subjectId, id);
    return last === undefined
      ? turnSql.listBySession(subjectId, session.id, {
          ...(from === undefined ? {} : { afterSeq: from - 1 }),
          ...(to === undefined ? {} : { throughSeq: to }),
        })
      : turnSql.lastBySession(subjectId, session.id, last);
  };

  return {
    sessions: (subjectId) => ({
      async create(options = {}) {
        const id = options.id === undefined ? newId() : requireId(options.id, 'session');
        const title = optionalString(options.title, 'title')?.trim() ?? '';
        return sessionSql.create({
          id,
          subjectId,
          title: title === '' ? null : title,
          at: clock(),
        });
      },
      get: (id) => sessionOf(subjectId, id),
      async list(options = {}) {
        return sessionSql.list(subjectId, pageOf(options, DEFAULT_SESSION_LIMIT));
      },
    }),
    turns: (subjectId) => ({
      async add(input) {
        await sessionOf(subjectId, input.sessionId);
        return recorder.add(subjectId, input);
      },
      async recordResponse(input) {
        const blocks: unknown = input.blocks;
        if (
          !Array.isArray(blocks) ||
          !blocks.every((b) => typeof b === 'object' && b !== null && typeof b.type === 'string')
        ) {
          throw invalidField('blocks', 'must be a list of content blocks, each with a type');
        }
        await sessionOf(subjectId, input.sessionId);
        return recorder.recordResponse(subjectId, input);
      },
    }),
    history: (subjectId) => ({
      turns: (id, options = {}) => turnsOf(subjectId, id, options),
      async render(id, options = {}) {
        optionalWhole(options.budgetChars, 'budgetChars', 1);
        optionalWhole(options.maxTurnChars, 'maxTurnChars', 1);
        return renderHistory(await turnsOf(subjectId, id, options), options);
      },
      async messages(id, options = {}) {
        return historyMessages(await turnsOf(subjectId, id, options));
      },
      async usage(id) {
        return usageSql.bySession(subjectId, (await sessionOf(subjectId, id)).id);
      },
      importConversations: (conversations, options = {}) =>
        importer.importConversations(subjectId, conversations, options),
    }),
  };
}
