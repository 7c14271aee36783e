import { EngineError } from '../domain/errors.js';
import { optionalBoolean } from '../domain/input.js';
import { isEmptyReport, receiptFromReport } from '../domain/receipt.js';
import { sessionNotFound } from '../domain/session.js';
import { parseRole, parseSpeaker, requireId, requireText, type Turn } from '../domain/turn.js';
import { turnTerms } from '../domain/analyze.js';
import { detectUtility } from '../domain/utility.js';
import type { TurnSql } from '../store/turn-sql.js';
import type { UsageSql } from '../store/usage-sql.js';
import { receiptReportFromBlocks } from './response-receipt.js';
import { stripImitatedReceipts } from './receipt-strip.js';
import { joinTextBlocks } from './text-join.js';
import type { AddTurnInput, AddTurnResult, RecordResponseInput } from './history-types.js';

export interface TurnRecorderDeps {
  turns: TurnSql;
  usage: UsageSql;
  clock: () => Date;
  newId: () => string;
  /**
   * Runs after a turn is stored, with the subject's indexed turn count including it (store
   * maintenance); its failure never fails the turn.
   */
  afterInsert?: (turn: Turn, indexedTurns: number) => Promise<void>;
}

/** Every turn enters through here: validation first, so bad input changes nothing. */
export class TurnRecorder {
  constructor(private readonly deps: TurnRecorderDeps) {}

  async add(input: AddTurnInput): Promise<AddTurnResult> {
    const sessionId = requireId(input.sessionId, 'session');
    const role = parseRole(input.role);
    const content = requireText(input.content);
    const speaker = parseSpeaker(input.speaker);
    const now = this.deps.clock();
    const at = input.at ?? now;
    if (!(at instanceof Date) || Number.isNaN(at.getTime())) {
      throw new EngineError('INVALID_ARGUMENT', 'a turn time must be a valid date');
    }
    if (at.getTime() > now.getTime()) {
      throw new EngineError('INVALID_ARGUMENT', 'a turn cannot be recorded in the future');
    }

    if (role !== 'assistant' && !isEmptyReport(input.receipt)) {
      throw new EngineError(
        'RECEIPT_NOT_ALLOWED',
        `only assistant turns carry a receipt, not ${role} turns`,
      );
    }
    optionalBoolean(input.utility, 'utility');
    optionalBoolean(input.corrective, 'corrective');
    if (input.corrective === true && role !== 'user') {
      throw new EngineError('INVALID_ARGUMENT', 'only a user turn can be marked corrective');
    }
    const receipt = role === 'assistant' ? receiptFromReport(input.receipt) : null;

    const utility = detectUtility(content, input.utility === true);
    if (utility !== null) {
      const requests = await this.deps.usage.count(sessionId, utility, content.length, at);
      if (requests === null) throw sessionNotFound(sessionId);
      return { recorded: false, utility, requests };
    }

    let stored = content;
    let strippedReceipts = 0;
    if (role === 'assistant') {
      const stripped = stripImitatedReceipts(content);
      stored = stripped.text;
      strippedReceipts = stripped.removed;
      if (stored.trim().length === 0) {
        throw new EngineError(
          'EMPTY_TEXT',
          'the reply held only an imitated receipt: there is no answer to record',
        );
      }
    }

    const inserted = await this.deps.turns.insert({
      id: this.deps.newId(),
      sessionId,
      role,
      content: stored,
      corrective: input.corrective === true,
      receipt,
      at,
      speaker,
      terms: turnTerms(speaker, stored),
    });
    if (inserted === null) throw sessionNotFound(sessionId);
    const { turn } = inserted;
    await this.deps.afterInsert?.(turn, inserted.indexedBefore + 1).catch(() => undefined);
    return { recorded: true, turn, strippedReceipts };
  }

  /** Records a model response from its content blocks: text joined, receipt from tool blocks. */
  recordResponse(input: RecordResponseInput): Promise<AddTurnResult> {
    return this.add({
      sessionId: input.sessionId,
      role: 'assistant',
      content: joinTextBlocks(input.blocks),
      receipt: receiptReportFromBlocks(input.blocks),
    });
  }
}
