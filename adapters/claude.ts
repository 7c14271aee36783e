// `memledger/claude`: memledger for Anthropic's SDKs, as the agent.
//
// - `memledgerMemoryTool`: Claude's memory tool (`memory_20250818`, run by the Anthropic client's
//   tool runner) over memledger. The model sees live memory as files under /memories, one file
//   per slot, one verified live fact per line with its passport. What it writes there is never
//   saved: each line it creates, inserts or replaces is a proposal through the write gate, citing
//   the user's own words, and waits for the owner; a delete or a rename is a request the owner
//   decides. Nothing the tool does makes anything live, and it never reads a file system.
// - `memledgerConversation`: the session, its arrival, and each turn recorded with its receipt,
//   for an agent that drives the Messages API itself.
// - `memledgerHooks`: the Claude Agent SDK's `hooks` option: the arrival in on SessionStart and
//   UserPromptSubmit, the user's prompt and each reply recorded with the tools that ran.
//
// Every function takes a subject handle or `{ url, token }` of a running `memledger serve`, and
// nothing else: memory is never written without the gate, never approved by the agent, never read
// unverified.
export type { MemoryTarget } from './agent-memory.js';
export {
  MEMORY_ROOT,
  MEMORY_TOOL_GUIDE,
  NO_REPLY_TEXT,
  memledgerMemoryHandlers,
  memledgerMemoryTool,
  memoryPath,
  type MemoryToolOptions,
} from './claude/memory-tool.js';
export {
  memledgerConversation,
  replyOf,
  type ConversationOptions,
  type MemledgerConversation,
} from './claude/conversation.js';
export {
  memledgerHooks,
  type MemledgerHookEvent,
  type MemledgerHooksOptions,
} from './claude/agent-sdk-hooks.js';
