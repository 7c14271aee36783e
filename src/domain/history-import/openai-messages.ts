import {
  conversationKey,
  isObject,
  malformed,
  notTheFormat,
  parseEach,
  receiptItem,
  Round,
  titleOf,
  type HistoryParse,
  type ImportedConversation,
  type ImportedTurn,
  type Json,
} from './imported-conversation.js';

/*
 * OpenAI-style chat messages (the Chat Completions `messages` list): a JSON list of messages, an
 * object with `messages`, a list of such objects, or JSON Lines of either (one conversation per
 * line when lines carry `messages`, as fine-tuning files do; one conversation of all the lines
 * when each line is a message). The fields read:
 *   conversation: `messages`, and `id` or `conversation_id` and `title` when present
 *   message: `role` (system | developer | user | assistant | tool | function), `content` (a string,
 *     or parts whose `text` is read), `name` (the speaker), `tool_calls[].function.name`,
 *     `function_call.name`, `annotations[]` of type `url_citation` (`url_citation.url`)
 * The format has no dates: turns are recorded at the time of import. It has no way to say that
 * no tool ran (tool messages are often left out of saved lists), so a reply without tool calls
 * has an unknown receipt.
 */

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((p): p is Json => isObject(p) && typeof p.text === 'string')
    .map((p) => p.text as string)
    .join('\n');
}

/** The names of the functions an assistant message calls. */
function callsOf(message: Json): unknown[] {
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const names = calls.map((c) => (isObject(c) && isObject(c.function) ? c.function.name : c));
  if (isObject(message.function_call)) names.push(message.function_call.name);
  return names;
}

function citations(message: Json, round: Round): boolean {
  let found = false;
  for (const a of Array.isArray(message.annotations) ? message.annotations : []) {
    if (!isObject(a) || a.type !== 'url_citation' || !isObject(a.url_citation)) continue;
    const url = a.url_citation.url;
    const item = typeof url === 'string' && /^https?:\/\//i.test(url) ? receiptItem(url) : null;
    if (item !== null) round.sources.add(item);
    found = true;
  }
  return found;
}

function conversation(messages: unknown, key: string, title: unknown): ImportedConversation {
  if (!Array.isArray(messages)) throw malformed('its "messages" is not a list');
  const turns: ImportedTurn[] = [];
  let round = new Round();
  const closeRound = () => {
    const turn = round.turn(false);
    if (turn !== null) turns.push(turn);
    round = new Round();
  };
  messages.forEach((message, i) => {
    if (!isObject(message)) throw malformed(`message ${i + 1} is not an object`);
    const role = ROLES.find((r) => r === message.role);
    if (role === undefined) throw malformed(`message ${i + 1} has no known role`);
    const text = textOf(message.content);
    const name = message.name;
    const speaker = typeof name === 'string' && name.trim() !== '' ? name.trim() : undefined;
    if (role === 'tool' || role === 'function') return; // output, named by the call's receipt
    if (role === 'assistant') {
      round.text(text);
      for (const call of callsOf(message)) round.tool(call);
      // a search model's citations: the search it ran itself
      if (citations(message, round)) round.tool('web_search');
      return;
    }
    if (text.trim() === '') return;
    closeRound();
    turns.push({
      role: role === 'user' ? 'user' : 'system',
      blocks: [{ type: 'text', text }],
      at: undefined,
      ...(speaker !== undefined && role === 'user' ? { speaker } : {}),
    });
  });
  closeRound();
  return { key, title: titleOf(title, 'Imported conversation'), createdAt: undefined, turns };
}

/** A conversation's own id, when the file gives one. */
function ownId(doc: Json): string | null {
  const id = doc.id ?? doc.conversation_id;
  return typeof id === 'string' && id !== '' ? id : null;
}

/** The documents of a file: one JSON value, or one per line. */
function documents(text: string): unknown[] {
  const body = text.replace(/^\uFEFF/, '');
  try {
    return [JSON.parse(body)];
  } catch {
    const lines = body.split('\n').filter((l) => l.trim() !== '');
    try {
      return lines.map((l) => JSON.parse(l) as unknown);
    } catch {
      throw notTheFormat('openai-messages', 'it is neither JSON nor JSON Lines');
    }
  }
}

/**
 * An OpenAI-style messages file, parsed. `name` (the file's name without its folder) keys
 * conversations the file gives no id to: `openai:<name>`, `openai:<name>:<n>` for the n-th.
 */
export function parseOpenAiMessages(text: string, name: string): HistoryParse {
  const docs = documents(text);
  const isMessage = (d: unknown) => isObject(d) && typeof d.role === 'string';
  const isConversation = (d: unknown) => isObject(d) && 'messages' in d;
  const single = docs.length === 1 ? docs[0] : undefined;
  let items: unknown[] = Array.isArray(single) ? single : docs;
  let messageList: unknown[] | null = null;
  if (items.length > 0 && items.every(isMessage)) {
    messageList = items;
    items = [];
  }
  if (messageList !== null) {
    const key = conversationKey('openai', name);
    return parseEach(
      [messageList],
      () => name,
      () => conversation(messageList, key, undefined),
    );
  }
  if (!items.some(isConversation)) {
    throw notTheFormat(
      'openai-messages',
      'it holds neither messages with a role nor "messages" lists',
    );
  }
  const many = items.length > 1;
  const keyOf = (item: unknown, i: number): string => {
    const id = isObject(item) ? ownId(item) : null;
    return id ?? (many ? `${name}:${i + 1}` : name);
  };
  return parseEach(items, keyOf, (item, i) => {
    if (!isObject(item)) throw malformed('it is not an object');
    return conversation(item.messages, conversationKey('openai', keyOf(item, i)), item.title);
  });
}
