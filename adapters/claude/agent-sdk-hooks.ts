// The Claude Agent SDK's hooks: the arrival in, the prompt and each reply recorded with the tools
// that ran.
import type {
  HookCallback,
  HookCallbackMatcher,
  HookEvent,
  HookJSONOutput,
} from '@anthropic-ai/claude-agent-sdk';
import type { HostReceiptReport } from '../../src/index.js';
import { collectUrls, receiptItem } from '../../src/domain/history-import/imported-conversation.js';
import { requireId } from '../../src/domain/turn.js';
import { agentMemoryOf, ensureSession, type MemoryTarget } from '../agent-memory.js';

import { codeOf, NO_REPLY_TEXT } from './memory-tool.js';
import { arrivalMessage } from './conversation.js';
// ---------------------------------------------------------------------------------------------
// The Claude Agent SDK's hooks

/** The hook events memledger answers. */
export type MemledgerHookEvent =
  'SessionStart' | 'UserPromptSubmit' | 'PostToolUse' | 'PostToolUseFailure' | 'Stop';

export interface MemledgerHooksOptions {
  /** The surface the arrival is for (default "code", as `memledger hook session-start`). */
  surface?: string;
  /**
   * Told of a memory failure. The hook then returns an empty output and the session carries on
   * without memory; default: a line on stderr with the error's code.
   */
  onError?: (error: unknown, event: MemledgerHookEvent) => void;
}

/**
 * Prompts that are not the person's words: machine-injected turns (task notifications, scheduled
 * wake-ups, poll events). They are never recorded as user turns, so the gate never takes a quote
 * from them. `user` and `sdk` (and a payload without the field) are the person's.
 */
const NOT_THE_USER = new Set(['system', 'loop_wakeup', 'schedule_wakeup', 'poll_event']);

/** What a reply has run so far, per session, until its Stop. */
interface OpenReply {
  tools: string[];
  sources: Set<string>;
}

function pendingReceipt(r: OpenReply | undefined): HostReceiptReport {
  if (r === undefined || (r.tools.length === 0 && r.sources.size === 0)) return { noTools: true };
  return {
    tools: r.tools.length === 0 ? ['unnamed_tool'] : r.tools,
    sources: [...r.sources],
  };
}

const EMPTY: HookJSONOutput = {};

/**
 * The `hooks` option of the Claude Agent SDK's `query()`:
 * - SessionStart: the arrival as additionalContext (the Claude session id is the memledger
 *   session id; the session is made on first sight);
 * - UserPromptSubmit: records the prompt as the user's turn (so the model can cite it at once),
 *   then adds the arrival recalled for it (its `relevant` block) as additionalContext;
 * - PostToolUse / PostToolUseFailure: the tools the reply ran (a failed one as `Name (error)`) and
 *   the URLs their results returned; a subagent's own calls are its conversation, not this one's;
 * - Stop: records the reply (`last_assistant_message`) with that receipt, or "no tools ran".
 * A memory failure never fails the session: the hook returns an empty output and `onError` hears
 * of it.
 */
export function memledgerHooks(
  memory: MemoryTarget,
  options: MemledgerHooksOptions = {},
): Partial<Record<HookEvent, HookCallbackMatcher[]>> {
  const me = agentMemoryOf(memory);
  const surface = options.surface ?? 'code';
  const report =
    options.onError ??
    ((error: unknown, event: MemledgerHookEvent) => {
      const code = codeOf(error) ?? 'INTERNAL';
      console.error(
        `memledger ${event} hook: ${code}: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
  const open = new Map<string, OpenReply>();

  const session = (input: { session_id: string; cwd?: string }) =>
    ensureSession(
      me,
      requireId(input.session_id, 'session'),
      input.cwd === undefined || input.cwd === ''
        ? 'Claude Agent SDK'
        : `Claude Agent SDK (${input.cwd})`,
    );

  /** Records a reply, and forgets what it ran. */
  async function recordReply(sessionId: string, text: string | undefined): Promise<void> {
    const ran = open.get(sessionId);
    open.delete(sessionId);
    const receipt = pendingReceipt(ran);
    let content = text ?? '';
    if (content.trim() === '') {
      if (receipt.noTools === true) return;
      content = NO_REPLY_TEXT;
    }
    await me.addTurn({ sessionId, role: 'assistant', content, receipt });
  }

  const hook =
    (
      event: MemledgerHookEvent,
      run: (input: Parameters<HookCallback>[0]) => Promise<HookJSONOutput>,
    ): HookCallback =>
    async (input) => {
      try {
        return await run(input);
      } catch (err) {
        try {
          report(err, event);
        } catch {
          // a reporter that throws must not fail the session either
        }
        return EMPTY;
      }
    };

  const sessionStart = hook('SessionStart', async (input) => {
    if (input.hook_event_name !== 'SessionStart') return EMPTY;
    const s = await session(input);
    const text = (await me.arrival({ surface, sessionId: s.id })).text;
    return { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: text } };
  });

  const userPromptSubmit = hook('UserPromptSubmit', async (input) => {
    if (input.hook_event_name !== 'UserPromptSubmit') return EMPTY;
    const s = await session(input);
    // a reply that never reached its Stop (interrupted, failed) still ran what it ran
    if (open.has(s.id)) await recordReply(s.id, undefined);
    const person = input.source === undefined || !NOT_THE_USER.has(input.source);
    let seq: number | null = null;
    if (person && input.prompt.trim() !== '') {
      seq = (await me.addTurn({ sessionId: s.id, role: 'user', content: input.prompt })).seq;
    }
    const message = arrivalMessage(input.prompt);
    const text = (
      await me.arrival({
        surface,
        sessionId: s.id,
        ...(message === undefined ? {} : { message }),
      })
    ).text;
    const turn =
      seq === null
        ? ''
        : `\n\n[This message is turn ${seq} of this session: a proposal citing the user's words in it names turn ${seq}]`;
    return {
      hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: text + turn },
    };
  });

  const ran = (sessionId: string, label: string, response: unknown) => {
    const r = open.get(sessionId) ?? { tools: [], sources: new Set<string>() };
    open.set(sessionId, r);
    if (!r.tools.includes(label) && r.tools.length < 1000) r.tools.push(label);
    collectUrls(response, r.sources);
  };

  const postToolUse = hook('PostToolUse', async (input) => {
    if (input.hook_event_name !== 'PostToolUse' || input.agent_id !== undefined) return EMPTY;
    const name = receiptItem(input.tool_name) ?? 'unnamed_tool';
    ran(requireId(input.session_id, 'session'), name, input.tool_response);
    return EMPTY;
  });

  const postToolUseFailure = hook('PostToolUseFailure', async (input) => {
    if (input.hook_event_name !== 'PostToolUseFailure' || input.agent_id !== undefined)
      return EMPTY;
    const name = receiptItem(input.tool_name) ?? 'unnamed_tool';
    ran(requireId(input.session_id, 'session'), `${name} (error)`, undefined);
    return EMPTY;
  });

  const stop = hook('Stop', async (input) => {
    if (input.hook_event_name !== 'Stop') return EMPTY;
    const s = await session(input);
    await recordReply(s.id, input.last_assistant_message);
    return EMPTY;
  });

  return {
    SessionStart: [{ hooks: [sessionStart] }],
    UserPromptSubmit: [{ hooks: [userPromptSubmit] }],
    PostToolUse: [{ hooks: [postToolUse] }],
    PostToolUseFailure: [{ hooks: [postToolUseFailure] }],
    Stop: [{ hooks: [stop] }],
  };
}
