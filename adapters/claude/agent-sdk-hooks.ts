// The Claude Agent SDK's hooks: the arrival in, the prompt and each reply recorded with the tools
// that ran.
import type {
  HookCallback,
  HookCallbackMatcher,
  HookEvent,
  HookJSONOutput,
} from '@anthropic-ai/claude-agent-sdk';
import {
  collectUrls,
  TOOLS_ONLY_TEXT,
} from '../../src/domain/history-import/imported-conversation.js';
import {
  injectedByClaudeCode,
  withoutReminders,
} from '../../src/domain/history-import/claude-code-text.js';
import { requireId } from '../../src/domain/turn.js';
import {
  agentMemoryOf,
  ensureSession,
  storableReply,
  storableText,
  toolLabel,
  type MemoryTarget,
} from '../agent-memory.js';

import { codeOf } from './memory-tool.js';
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
 * Prompts that are not the person's words, by their `source`: machine-injected turns (task
 * notifications, scheduled wake-ups, poll events). `user` and `sdk` are the person's, unless the
 * text is one Claude Code wrote itself (`injectedByClaudeCode`): a payload may omit `source`.
 */
const NOT_THE_USER = new Set(['system', 'loop_wakeup', 'schedule_wakeup', 'poll_event']);

/**
 * The person's words in a prompt, or null when it holds none: never a machine-injected prompt,
 * whatever its `source` says, and never the system reminders Claude Code adds to one.
 */
function personsWords(prompt: string, source: string | undefined): string | null {
  if (source !== undefined && NOT_THE_USER.has(source)) return null;
  if (injectedByClaudeCode(prompt)) return null;
  const text = withoutReminders(prompt).trim();
  return text === '' ? null : storableText(text);
}

/** What a reply has run so far, per session, until its Stop. */
interface OpenReply {
  tools: string[];
  sources: Set<string>;
}

/**
 * At most this many sessions' replies are held open (a session that ran tools and never reached
 * its Stop); past it the one least recently heard of is forgotten.
 */
const MAX_OPEN = 1_000;
/** At most this many forgotten sessions are remembered, so their reply never claims "no tools". */
const MAX_FORGOTTEN = 10_000;
const MAX_TOOLS = 1_000;

const EMPTY: HookJSONOutput = {};

/**
 * The `hooks` option of the Claude Agent SDK's `query()`:
 * - SessionStart: the arrival as additionalContext (the Claude session id is the memledger
 *   session id; the session is made on first sight);
 * - UserPromptSubmit: records the prompt as the user's turn (so the model can cite it at once),
 *   unless Claude Code injected it, then adds the arrival recalled for it (its `relevant` block)
 *   as additionalContext;
 * - PostToolUse / PostToolUseFailure: the tools the reply ran (a failed one as `Name (error)`) and
 *   the URLs their results returned; a subagent's own calls are its conversation, not this one's;
 * - Stop: records the reply (`last_assistant_message`) with that receipt, or "no tools ran"; what
 *   the store cannot keep in it (a NUL, an imitated receipt, a tool's name) never costs the reply.
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
  /** Sessions whose open reply was forgotten: what their reply ran is not known. */
  const forgotten = new Set<string>();

  const session = (input: { session_id: string; cwd?: string }) =>
    ensureSession(
      me,
      requireId(input.session_id, 'session'),
      input.cwd === undefined || input.cwd === ''
        ? 'Claude Agent SDK'
        : `Claude Agent SDK (${input.cwd})`,
    );

  /**
   * Records a reply, and forgets what it ran. A reply whose tools were forgotten (`MAX_OPEN`) is
   * recorded without a receipt: what it ran is unknown, never "no tools ran".
   */
  async function recordReply(sessionId: string, text: string | undefined): Promise<void> {
    const ran = open.get(sessionId);
    open.delete(sessionId);
    if (forgotten.delete(sessionId)) {
      // it ran tools, and which is no longer known: the receipt is `unknown`
      const content = storableReply({ text: text ?? '', tools: [], sources: [] })?.content;
      await me.addTurn({ sessionId, role: 'assistant', content: content ?? TOOLS_ONLY_TEXT });
      return;
    }
    const reply = storableReply({
      text: text ?? '',
      tools: ran?.tools ?? [],
      sources: ran?.sources ?? [],
    });
    if (reply !== null) await me.addTurn({ sessionId, role: 'assistant', ...reply });
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
    if (open.has(s.id) || forgotten.has(s.id)) await recordReply(s.id, undefined);
    const words = personsWords(input.prompt, input.source);
    let seq: number | null = null;
    if (words !== null) {
      seq = (await me.addTurn({ sessionId: s.id, role: 'user', content: words })).seq;
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
    // the most recently heard of last; the least recently heard of is forgotten past the cap
    open.delete(sessionId);
    open.set(sessionId, r);
    for (const oldest of open.keys()) {
      if (open.size <= MAX_OPEN) break;
      open.delete(oldest);
      forgotten.add(oldest);
    }
    for (const oldest of forgotten) {
      if (forgotten.size <= MAX_FORGOTTEN) break;
      forgotten.delete(oldest);
    }
    if (!r.tools.includes(label) && r.tools.length < MAX_TOOLS) r.tools.push(label);
    collectUrls(response, r.sources);
  };

  const postToolUse = hook('PostToolUse', async (input) => {
    if (input.hook_event_name !== 'PostToolUse' || input.agent_id !== undefined) return EMPTY;
    ran(requireId(input.session_id, 'session'), toolLabel(input.tool_name), input.tool_response);
    return EMPTY;
  });

  const postToolUseFailure = hook('PostToolUseFailure', async (input) => {
    if (input.hook_event_name !== 'PostToolUseFailure' || input.agent_id !== undefined)
      return EMPTY;
    ran(requireId(input.session_id, 'session'), toolLabel(input.tool_name, 'error'), undefined);
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
