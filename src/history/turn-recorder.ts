import { EngineError } from '../domain/errors.js';
import {
  dateProblem,
  INPUT_LIMITS,
  invalidField,
  optionalBoolean,
  structureProblem,
} from '../domain/input.js';
import { isEmptyReport, receiptFromReport } from '../domain/receipt.js';
import { sessionNotFound } from '../domain/session.js';
import { parseRole, parseSpeaker, requireId, requireText, type Turn } from '../domain/turn.js';
import { turnTerms } from '../domain/text/analyze.js';
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
  /** ModuleDeps.wroteNeutral: a turn changes nothing a trust view reads. */
  wroteNeutral?: (xid: string | null | undefined) => void;
}

/** How deeply a response's content blocks may nest (a web search result is about five deep). */
const BLOCKS_DEPTH = 2 * INPUT_LIMITS.depth;

/**
 * Every turn enters through here: validation first, so bad input changes nothing. A turn is
 * recorded in one subject's session (session ids are unique per subject).
 */
export class TurnRecorder {
  constructor(private readonly deps: TurnRecorderDeps) {}

  async add(subjectId: string, input: AddTurnInput): Promise<AddTurnResult> {
    const sessionId = requireId(input.sessionId, 'session');
    const role = parseRole(input.role);
    const content = requireText(input.content);
    const speaker = parseSpeaker(input.speaker);
    const now = this.deps.clock();
    const at = input.at ?? now;
    const atProblem = at instanceof Date ? dateProblem(at) : 'is not a date';
    if (atProblem !== null) throw invalidField('at', `(a turn time) ${atProblem}`);
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

    // a prefix names a utility request in the user's message only (older clients mark theirs
    // so); a reply is one only when the host says so: a model that begins its reply with
    // `__insight__` must not take the reply and its receipt out of history
    const utility = detectUtility(role === 'user' ? content : '', input.utility === true);
    if (utility !== null) {
      const requests = await this.deps.usage.count(
        subjectId,
        sessionId,
        utility,
        content.length,
        at,
      );
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
      subjectId,
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
    // one statement on the engine's client, committed on its own (TurnSql.insert)
    this.deps.wroteNeutral?.(inserted.xid);
    const { turn } = inserted;
    await this.deps.afterInsert?.(turn, inserted.indexedBefore + 1).catch(() => undefined);
    return { recorded: true, turn, strippedReceipts };
  }

  /**
   * Records a model response from its content blocks: text joined, receipt from tool blocks. The
   * blocks must be a list of objects with a string `type`, plain data nested at most
   * `BLOCKS_DEPTH` deep (they are walked for sources).
   */
  async recordResponse(subjectId: string, input: RecordResponseInput): Promise<AddTurnResult> {
    const blocks: unknown = input.blocks;
    if (
      !Array.isArray(blocks) ||
      !blocks.every(
        (b) =>
          typeof b === 'object' && b !== null && typeof (b as { type?: unknown }).type === 'string',
      )
    ) {
      throw invalidField('blocks', 'must be a list of content blocks, each with a string "type"');
    }
    const shape = structureProblem(blocks, {
      depth: BLOCKS_DEPTH,
      values: Number.MAX_SAFE_INTEGER,
    });
    if (shape !== null) throw invalidField('blocks', `must be plain JSON data: they ${shape}`);
    return this.add(subjectId, {
      sessionId: input.sessionId,
      role: 'assistant',
      content: joinTextBlocks(input.blocks),
      receipt: receiptReportFromBlocks(input.blocks),
    });
  }
}
