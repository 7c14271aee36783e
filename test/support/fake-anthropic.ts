// A fake Anthropic Messages API on loopback, speaking the real protocol: POST /v1/messages with
// the client's API key and version headers, a JSON body (model, max_tokens, messages, tools,
// system, and the SDK's `thread` parameter, which sends only the new messages after a message
// this server answered), answered with a message of content blocks (text, tool_use) and a stop
// reason; `stream: true` is answered with the server-sent events the API sends (message_start,
// content_block_start/delta/stop, message_delta, message_stop). The model is a script: a
// function of the whole conversation so far. Errors are the API's shape,
// {"type":"error","error":{"type","message"}}.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** What the script answers: content blocks and why the model stopped. */
export interface FakeTurn {
  content: FakeBlock[];
  stop_reason: 'end_turn' | 'tool_use' | 'max_tokens';
}

/** A message of the conversation as the API receives it. */
export interface FakeMessage {
  role: 'user' | 'assistant';
  content: string | Array<{ type: string; [key: string]: unknown }>;
}

export interface FakeRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  /** The whole conversation the request continues (its thread's messages, then its own). */
  conversation: FakeMessage[];
}

export type FakeModel = (conversation: FakeMessage[], request: FakeRequest) => FakeTurn;

export interface FakeAnthropic {
  /** The base URL for the client (`baseURL`, or ANTHROPIC_BASE_URL). */
  url: string;
  /** Every /v1/messages request answered, in order. */
  requests: FakeRequest[];
  /** Every request whatever its path (a client's other calls). */
  seen: Array<{ method: string; path: string }>;
  /** The script answers from now on. */
  setModel(model: FakeModel): void;
  close(): Promise<void>;
}

/** A script of turns in order; asking for more than it holds answers an error naming it. */
export function scripted(...turns: Array<FakeTurn | ((c: FakeMessage[]) => FakeTurn)>): FakeModel {
  let i = 0;
  return (conversation) => {
    const next = turns[i++];
    if (next === undefined) throw new Error(`the script has no turn ${i}`);
    return typeof next === 'function' ? next(conversation) : next;
  };
}

/** A tool call turn. */
export const toolUse = (id: string, name: string, input: Record<string, unknown>): FakeTurn => ({
  content: [{ type: 'tool_use', id, name, input }],
  stop_reason: 'tool_use',
});

/** A final text turn. */
export const say = (text: string): FakeTurn => ({
  content: [{ type: 'text', text }],
  stop_reason: 'end_turn',
});

/** The tool results of the last user message of a conversation, by tool_use id. */
export function toolResults(
  conversation: readonly FakeMessage[],
): Map<string, { text: string; isError: boolean }> {
  const out = new Map<string, { text: string; isError: boolean }>();
  const last = conversation.at(-1);
  if (last === undefined || typeof last.content === 'string') return out;
  for (const b of last.content) {
    if (b.type !== 'tool_result' || typeof b.tool_use_id !== 'string') continue;
    const c = b.content;
    const text =
      typeof c === 'string'
        ? c
        : Array.isArray(c)
          ? c.map((x: { text?: unknown }) => (typeof x.text === 'string' ? x.text : '')).join('\n')
          : '';
    out.set(b.tool_use_id, { text, isError: b.is_error === true });
  }
  return out;
}

function apiError(res: ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_fake' });
  res.end(JSON.stringify({ type: 'error', error: { type, message } }));
}

function sse(res: ServerResponse, message: Record<string, unknown>, content: FakeBlock[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event: string, data: unknown) =>
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  send('message_start', {
    type: 'message_start',
    message: { ...message, content: [], stop_reason: null, stop_sequence: null },
  });
  content.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'text', text: '' },
      });
      send('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'text_delta', text: block.text },
      });
    } else {
      send('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      send('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
    }
    send('content_block_stop', { type: 'content_block_stop', index });
  });
  send('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: 5 },
  });
  send('message_stop', { type: 'message_stop' });
  res.end();
}

export async function startFakeAnthropic(initial: FakeModel): Promise<FakeAnthropic> {
  let model = initial;
  const requests: FakeRequest[] = [];
  const seen: Array<{ method: string; path: string }> = [];
  /** Each answered message's whole conversation, itself included: what `thread` continues. */
  const threads = new Map<string, FakeMessage[]>();
  let count = 0;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    seen.push({ method: req.method ?? '', path });
    if (req.method !== 'POST' || path !== '/v1/messages') {
      apiError(res, 404, 'not_found_error', `${req.method} ${path} is not served here`);
      return;
    }
    const key = req.headers['x-api-key'] ?? req.headers.authorization;
    if (key === undefined || key === '') {
      apiError(res, 401, 'authentication_error', 'x-api-key header is required');
      return;
    }
    if (req.headers['anthropic-version'] === undefined) {
      apiError(res, 400, 'invalid_request_error', 'anthropic-version header is required');
      return;
    }
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      apiError(res, 400, 'invalid_request_error', 'the body is not JSON');
      return;
    }
    if (typeof body.model !== 'string' || typeof body.max_tokens !== 'number') {
      apiError(res, 400, 'invalid_request_error', 'model and max_tokens are required');
      return;
    }
    if (!Array.isArray(body.messages)) {
      apiError(res, 400, 'invalid_request_error', 'messages: field required');
      return;
    }
    const thread = body.thread as { type?: string; previous_message_id?: string } | undefined;
    let before: FakeMessage[] = [];
    if (thread?.type === 'continue') {
      const prior = threads.get(thread.previous_message_id ?? '');
      if (prior === undefined) {
        apiError(res, 400, 'invalid_request_error', 'thread.previous_message_id is not a message');
        return;
      }
      before = prior;
    }
    const conversation = [...before, ...(body.messages as FakeMessage[])];
    const request: FakeRequest = { path, headers: req.headers, body, conversation };
    requests.push(request);
    let turn: FakeTurn;
    try {
      turn = model(conversation, request);
    } catch (err) {
      apiError(res, 500, 'api_error', (err as Error).message);
      return;
    }
    const id = `msg_fake_${++count}`;
    threads.set(id, [...conversation, { role: 'assistant', content: turn.content }]);
    const message = {
      id,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: turn.content,
      stop_reason: turn.stop_reason,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    };
    if (body.stream === true) {
      sse(res, message, turn.content);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${count}` });
    res.end(JSON.stringify(message));
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) apiError(res, 500, 'api_error', (err as Error).message);
      else res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    seen,
    setModel(m) {
      model = m;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
