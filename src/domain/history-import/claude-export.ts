import {
  collectUrls,
  conversationKey,
  dateOf,
  fillTimes,
  isObject,
  malformed,
  notTheFormat,
  parseEach,
  Round,
  titleOf,
  type HistoryParse,
  type ImportedConversation,
  type ImportedTurn,
  type Json,
} from './imported-conversation.js';

/*
 * Claude's account export (Settings → Privacy → Export data), `conversations.json`: a list of
 * conversations. The fields read:
 *   conversation: `uuid`, `name`, `created_at` (ISO 8601), `chat_messages`, and
 *     `current_leaf_message_uuid` when present
 *   message: `uuid`, `sender` (human | assistant), `created_at`, `parent_message_uuid` when
 *     present, `text` (the whole message as plain text), `content` (its blocks, when present)
 *   blocks: `text` (`text`, `citations` with URLs), `tool_use` (`name`), `tool_result` (`name`,
 *     `is_error`, `content` whose items carry a `url`, as web search's results do); `thinking`
 *     and other blocks are not the reply
 * `attachments` and `files` are left out: a file's extracted text is not what the person typed.
 * The export leaves some tool blocks out ("This block is not supported on your current device
 * yet"), so a reply without tool blocks has an unknown receipt, never "no tools ran".
 */

const SENDERS = { human: 'user', assistant: 'assistant' } as const;

/** The messages of the branch the person kept, when the export records the tree; else all. */
function keptBranch(conv: Json, messages: readonly Json[]): Json[] {
  const byId = new Map<string, Json>();
  for (const m of messages) {
    if (typeof m.uuid === 'string') byId.set(m.uuid, m);
  }
  if (!messages.every((m) => typeof m.parent_message_uuid === 'string') || byId.size === 0) {
    return [...messages];
  }
  const leafId = conv.current_leaf_message_uuid;
  let at: Json | undefined =
    typeof leafId === 'string' ? byId.get(leafId) : messages[messages.length - 1];
  const path: Json[] = [];
  const seen = new Set<Json>();
  while (at !== undefined && !seen.has(at)) {
    seen.add(at);
    path.push(at);
    at = byId.get(at.parent_message_uuid as string);
  }
  return path.reverse();
}

function blocksOf(message: Json): Json[] | null {
  return Array.isArray(message.content) ? message.content.filter(isObject) : null;
}

function humanText(message: Json): string {
  const blocks = blocksOf(message);
  if (blocks === null || blocks.length === 0) {
    return typeof message.text === 'string' ? message.text : '';
  }
  return blocks
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('\n');
}

function assistantRound(message: Json): Round {
  const round = new Round();
  round.at = dateOf(message.created_at);
  const blocks = blocksOf(message);
  if (blocks === null || blocks.length === 0) {
    if (typeof message.text === 'string') round.text(message.text);
    return round;
  }
  // each result answers one call: by its tool_use_id, else the first unanswered call of its name
  const uses = blocks.filter((b) => b.type === 'tool_use');
  const failed = new Set<Json>();
  const answered = new Set<Json>();
  for (const b of blocks) {
    if (b.type !== 'tool_result') continue;
    const use =
      uses.find((u) => typeof b.tool_use_id === 'string' && u.id === b.tool_use_id) ??
      uses.find((u) => !answered.has(u) && (typeof b.name !== 'string' || u.name === b.name));
    if (use === undefined) continue;
    answered.add(use);
    if (b.is_error === true) failed.add(use);
  }
  for (const b of blocks) {
    if (b.type === 'text' && typeof b.text === 'string') {
      round.text(b.text);
      collectUrls(b.citations, round.sources);
    } else if (b.type === 'tool_use') {
      const name = typeof b.name === 'string' ? b.name : undefined;
      round.tool(name !== undefined && failed.has(b) ? `${name} (error)` : name);
    } else if (b.type === 'tool_result' && b.is_error !== true) {
      collectUrls(b.content, round.sources);
    }
  }
  return round;
}

function conversation(item: unknown): ImportedConversation {
  if (!isObject(item)) throw malformed('it is not an object');
  const id = item.uuid;
  if (typeof id !== 'string' || id === '') throw malformed('it has no uuid');
  if (!Array.isArray(item.chat_messages)) throw malformed('it has no chat_messages');
  const messages = item.chat_messages.map((m) => {
    if (!isObject(m)) throw malformed('a chat message is not an object');
    return m;
  });
  const turns: ImportedTurn[] = [];
  for (const message of keptBranch(item, messages)) {
    const sender = message.sender;
    const role = typeof sender === 'string' ? SENDERS[sender as keyof typeof SENDERS] : undefined;
    if (role === undefined) {
      throw malformed(
        `a message has the unknown sender ${JSON.stringify(sender ?? null).slice(0, 40)}`,
      );
    }
    if (role === 'user') {
      const text = humanText(message);
      if (text.trim() === '') continue;
      turns.push({ role, blocks: [{ type: 'text', text }], at: dateOf(message.created_at) });
    } else {
      const turn = assistantRound(message).turn(false);
      if (turn !== null) turns.push(turn);
    }
  }
  const createdAt = dateOf(item.created_at);
  fillTimes(turns, createdAt);
  return {
    key: conversationKey('claude', id),
    title: titleOf(item.name, 'Claude conversation'),
    createdAt,
    turns,
  };
}

/** Claude's account-export `conversations.json`, parsed. */
export function parseClaudeExport(doc: unknown): HistoryParse {
  const items = Array.isArray(doc) ? doc : isObject(doc) && 'chat_messages' in doc ? [doc] : null;
  if (items === null) {
    throw notTheFormat('claude', 'conversations.json holds a list of conversations');
  }
  if (items.length > 0 && !items.some((c) => isObject(c) && 'chat_messages' in c)) {
    throw notTheFormat('claude', 'no conversation in it has "chat_messages"');
  }
  return parseEach(
    items,
    (c, i) => (isObject(c) && typeof c.uuid === 'string' && c.uuid !== '' ? c.uuid : `#${i + 1}`),
    conversation,
  );
}
