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
 * ChatGPT's data export (Settings → Data controls → Export data), `conversations.json`: a list of
 * conversations. The fields read:
 *   conversation: `conversation_id` (or `id`), `title`, `create_time` (epoch seconds), `mapping`
 *     (node id → node), `current_node` (the leaf of the branch the person last saw)
 *   node: `parent` (a node id or null), `message` (null on the root)
 *   message: `author.role` (user | assistant | system | tool), `author.name` (a tool's name:
 *     `browser`, `web.run`, `python`, `dalle.text2im`, …), `create_time`, `recipient` (`all`, or
 *     the tool an assistant message calls), `content.content_type` (`text`, `multimodal_text`,
 *     `code`, `tether_browsing_display`, `tether_quote`, `thoughts`, `user_editable_context`, …),
 *     `content.parts` (strings, or objects such as image pointers), `metadata`
 *     (`is_visually_hidden_from_conversation`; URLs under `citations`, `content_references`,
 *     `search_result_groups`, `_cite_metadata`)
 * Only the active branch is read: from `current_node` up through `parent`. Regenerated replies
 * and edited prompts hang off other branches and are not what the person kept.
 */

const MAX_DEPTH = 100_000;
/** Assistant content that is not the reply: reasoning, its recap, code sent to a tool. */
const NOT_THE_REPLY = new Set(['thoughts', 'reasoning_recap', 'code', 'execution_output']);

/** The active branch, root first. */
function activeBranch(mapping: Json, leaf: string): Json[] {
  const path: Json[] = [];
  const seen = new Set<string>();
  let id: unknown = leaf;
  while (typeof id === 'string') {
    if (seen.has(id) || seen.size > MAX_DEPTH) throw malformed(`its mapping loops at node ${id}`);
    seen.add(id);
    const node = mapping[id];
    if (!isObject(node)) throw malformed(`node ${id.slice(0, 64)} is not in its mapping`);
    path.push(node);
    id = node.parent;
    if (id !== null && id !== undefined && typeof id !== 'string') {
      throw malformed('a node has a parent that is not a node id');
    }
  }
  return path.reverse();
}

/** The strings of `content.parts`, joined; images and other objects are left out. */
function partsText(content: Json): string {
  const parts = Array.isArray(content.parts) ? content.parts : [];
  const texts = parts.filter((p): p is string => typeof p === 'string');
  if (texts.length === 0 && typeof content.text === 'string') return content.text;
  return texts.join('\n');
}

function conversation(item: unknown): ImportedConversation {
  if (!isObject(item)) throw malformed('it is not an object');
  const id = item.conversation_id ?? item.id;
  if (typeof id !== 'string' || id === '') throw malformed('it has no conversation_id');
  const { mapping, current_node: leaf } = item;
  if (!isObject(mapping)) throw malformed('it has no mapping');
  if (typeof leaf !== 'string') throw malformed('it has no current_node');

  const turns: ImportedTurn[] = [];
  let round = new Round();
  const closeRound = () => {
    const turn = round.turn(true);
    if (turn !== null) turns.push(turn);
    round = new Round();
  };
  for (const node of activeBranch(mapping, leaf)) {
    const message = node.message;
    if (message === null || message === undefined) continue;
    if (!isObject(message) || !isObject(message.author) || !isObject(message.content)) {
      throw malformed('a message on its branch has no author or content');
    }
    const role = message.author.role;
    if (typeof role !== 'string') throw malformed('a message on its branch has no author role');
    const metadata = isObject(message.metadata) ? message.metadata : {};
    const at = dateOf(message.create_time);
    const type = message.content.content_type;
    if (role === 'tool') {
      // a tool's output: named in the receipt, its URLs the sources, its text never a turn
      round.tool(message.author.name);
      collectUrls(metadata, round.sources);
      collectUrls(message.content, round.sources);
      round.at = at ?? round.at;
      continue;
    }
    if (metadata.is_visually_hidden_from_conversation === true) continue;
    const name = message.author.name;
    const speaker = typeof name === 'string' && name.trim() !== '' ? name.trim() : undefined;
    if (role === 'user') {
      // custom instructions ride along as a user message; the person did not say them here
      if (type === 'user_editable_context') continue;
      const text = partsText(message.content);
      if (text.trim() === '') continue;
      closeRound();
      turns.push({
        role: 'user',
        blocks: [{ type: 'text', text }],
        at,
        ...(speaker ? { speaker } : {}),
      });
    } else if (role === 'assistant') {
      const recipient = message.recipient;
      if (typeof recipient === 'string' && recipient !== 'all') {
        round.tool(recipient); // a call the assistant sent to a tool
      } else if (typeof type === 'string' && !NOT_THE_REPLY.has(type)) {
        round.text(partsText(message.content));
        collectUrls(metadata, round.sources);
      }
      round.at = at ?? round.at;
    } else if (role === 'system') {
      const text = partsText(message.content);
      if (text.trim() === '') continue;
      closeRound();
      turns.push({ role: 'system', blocks: [{ type: 'text', text }], at });
    } else {
      throw malformed(`a message on its branch has the unknown role "${role.slice(0, 32)}"`);
    }
  }
  closeRound();
  const createdAt = dateOf(item.create_time);
  fillTimes(turns, createdAt);
  return {
    key: conversationKey('chatgpt', id),
    title: titleOf(item.title, 'ChatGPT conversation'),
    createdAt,
    turns,
  };
}

/** ChatGPT's `conversations.json`, parsed (a single conversation object is read as a list of one). */
export function parseChatGptExport(doc: unknown): HistoryParse {
  const items = Array.isArray(doc) ? doc : isObject(doc) && 'mapping' in doc ? [doc] : null;
  if (items === null) {
    throw notTheFormat('chatgpt', 'conversations.json holds a list of conversations');
  }
  if (items.length > 0 && !items.some((c) => isObject(c) && 'mapping' in c)) {
    throw notTheFormat('chatgpt', 'no conversation in it has a "mapping" of messages');
  }
  return parseEach(
    items,
    (c, i) => {
      const id = isObject(c) ? (c.conversation_id ?? c.id) : undefined;
      return typeof id === 'string' && id !== '' ? id : `#${i + 1}`;
    },
    conversation,
  );
}
