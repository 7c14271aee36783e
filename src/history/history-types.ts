import type { PageOptions } from '../domain/input.js';
import type { Session } from '../domain/session.js';
import type { Turn, TurnRole } from '../domain/turn.js';
import type { UtilityKind } from '../domain/utility.js';
import type { HostReceiptReport } from '../domain/receipt.js';
import type { HistoryMessage, RenderHistoryOptions } from './render-history.js';
import type { ResponseBlock } from './text-join.js';
import type { UtilityUsage } from '../domain/utility-usage.js';
import type {
  ImportedConversation,
  SkippedConversation,
} from '../domain/history-import/imported-conversation.js';

/** What `turns.add` records. The subject is the handle's; the session must be one of its own. */
export interface AddTurnInput {
  sessionId: string;
  role: TurnRole;
  content: string;
  /** What the host observed; only assistant turns carry one. Omitted: receipt `unknown`. */
  receipt?: HostReceiptReport;
  /** A utility generation (title, insight): counted, never recorded as a turn. */
  utility?: boolean;
  /** The host recorded this user turn as a correction of the agent. */
  corrective?: boolean;
  /** Who spoke, when a role has more than one person behind it (OpenAI's message `name`). */
  speaker?: string;
  /** When the turn was said, for importing history (default now). Never in the future. */
  at?: Date;
}

export type AddTurnResult =
  | { recorded: true; turn: Turn; strippedReceipts: number }
  | { recorded: false; utility: UtilityKind; requests: number };

export interface RecordResponseInput {
  sessionId: string;
  /** The content blocks of one response, or of successive tool rounds in order. */
  blocks: readonly ResponseBlock[];
}

export interface HistoryOptions {
  /** Only the last N turns (a whole number of at least 1). */
  last?: number;
  /** Only turns from this seq on (a whole number of at least 1; not with `last`). */
  from?: number;
  /** Only turns up to this seq, inclusive (at least 1 and at least `from`; not with `last`). */
  to?: number;
}

export interface ImportProgress {
  /** Conversations handled so far, of `total`. */
  done: number;
  total: number;
  /** The session the last one went to. */
  sessionId: string;
}

export interface ImportConversationsOptions {
  onProgress?: (progress: ImportProgress) => void;
}

export interface ImportConversationsResult {
  /** Sessions created. */
  sessions: number;
  /** Sessions that existed and had the conversation's later turns appended. */
  grown: number;
  /** Turns recorded. */
  turns: number;
  /** Conversations whose session already held every turn: nothing recorded. */
  unchanged: number;
  /** Conversations not recorded, each with why (nothing of one is half-recorded). */
  skipped: SkippedConversation[];
}

/** Sessions: the conversations of the handle's subject. */
export interface SessionsApi {
  /** Starts a session; `id` when the host names it (SESSION_EXISTS if taken). */
  create(options?: { id?: string; title?: string }): Promise<Session>;
  /** One session of this subject (SESSION_NOT_FOUND otherwise). */
  get(sessionId: string): Promise<Session>;
  /** The subject's sessions, newest first (default 100). */
  list(options?: PageOptions): Promise<Session[]>;
}

/** Turns: every recorded turn enters through here, receipts and all. */
export interface TurnsApi {
  /** Records one turn (or counts a utility generation); imitated receipts are cut from replies. */
  add(input: AddTurnInput): Promise<AddTurnResult>;
  /** Records a model response from its content blocks: text joined, receipt from tool blocks. */
  recordResponse(input: RecordResponseInput): Promise<AddTurnResult>;
}

/** History: one session's turns, as rows, as text with receipts, or as chat messages. */
export interface HistoryApi {
  /** The session's turns in order (seq from 1), its last N, or those from seq `from` to `to`. */
  turns(sessionId: string, options?: HistoryOptions): Promise<Turn[]>;
  /** The transcript with each receipt beside its turn; truncation never cuts a receipt. */
  render(sessionId: string, options?: HistoryOptions & RenderHistoryOptions): Promise<string>;
  /** Chat-completion messages, receipts folded into assistant content. */
  messages(sessionId: string, options?: HistoryOptions): Promise<HistoryMessage[]>;
  /** Utility generations counted in the session (titles, insights), never recorded as turns. */
  usage(sessionId: string): Promise<UtilityUsage[]>;
  /**
   * Records exported conversations (`memledger import-history`, docs/HISTORY-IMPORT.md) as
   * sessions, one per conversation keyed by its `key`, and turns: history, never memory. A
   * conversation already held records nothing; one that grew gets only its new turns; one whose
   * turn fails validation is skipped whole, with the reason.
   */
  importConversations(
    conversations: readonly ImportedConversation[],
    options?: ImportConversationsOptions,
  ): Promise<ImportConversationsResult>;
}
