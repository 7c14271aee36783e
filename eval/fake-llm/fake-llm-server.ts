/**
 * A fake LLM on a real `node:http` server that speaks a provider's own wire protocol: OpenAI
 * Chat Completions with structured output (`response_format: json_schema`) or the Anthropic
 * Messages API with a forced tool. Its model is scripted (scripted-reflection.ts and
 * scripted-summary.ts, which confabulate like seed 001's overnight reflection); a queue of steps
 * makes it fail the ways real providers fail: refusals, truncation, HTTP errors, hangs, drops.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isRecord, parseSections } from './prompt-sections.js';
import { scriptedReflection } from './scripted-reflection.js';
import { scriptedSummary } from './scripted-summary.js';

/** The wire protocols the fake speaks. */
export const FAKE_LLM_PROTOCOLS = ['openai', 'anthropic'] as const;
/** One of `FAKE_LLM_PROTOCOLS`. */
export type FakeLlmProtocol = (typeof FAKE_LLM_PROTOCOLS)[number];

/** The tasks the scripted model can do, named as the schema (openai) or tool (anthropic). */
export const FAKE_LLM_TASKS = ['propose_memories', 'write_summary'] as const;
/** One of `FAKE_LLM_TASKS`. */
export type FakeLlmTask = (typeof FAKE_LLM_TASKS)[number];

/**
 * How the fake answers one request. `scripted`: the scripted model's result; `answer`: this
 * value as the structured result; `content`: this raw text instead (openai: message content;
 * anthropic: a text block, no tool call); `refusal`: the model refuses; `truncated`: output cut
 * at the token limit; `status`: an HTTP error, in the provider's error shape unless `body` is
 * given (a string body is sent as-is); `hang`: never answer until `close()`; `drop`: destroy
 * the socket without answering.
 */
export type FakeStep =
  | 'scripted'
  | 'refusal'
  | 'truncated'
  | 'hang'
  | 'drop'
  | { answer: unknown }
  | { content: string }
  | { status: number; body?: unknown; headers?: Record<string, string> };

/** One request as the fake received it. */
export interface RecordedRequest {
  method: string;
  /** The path without the query string. */
  path: string;
  /** Header names lowercased; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The parsed JSON body; null when the body is empty or not JSON. */
  body: unknown;
  /** The body as sent. */
  raw: string;
}

/** How to start a fake. */
export interface FakeLlmConfig {
  protocol: FakeLlmProtocol;
  /**
   * Steps consumed one per request to the endpoint (shifted from this very array, so a caller may
   * push more while the fake runs); `'scripted'` once it is empty.
   */
  script?: FakeStep[];
  /** When set, requests must carry it (`Authorization: Bearer …` or `x-api-key`). */
  apiKey?: string;
  /** When set, a request naming another model gets the provider's 404 for an unknown model. */
  model?: string;
}

/** A running fake. */
export interface FakeLlm {
  /** The base URL a client is configured with (`…/v1` for openai, the origin for anthropic). */
  url: string;
  /** Every request received, in order, including rejected ones. */
  requests: RecordedRequest[];
  /** End hanging requests and close every connection and the server. */
  close(): Promise<void>;
}

/** What the fake answers when asked to refuse. */
export const REFUSAL_TEXT = "I'm sorry, I can't help with that.";

/** A response ready to send. */
interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A well-formed request, reduced to what answering it needs. */
interface Call {
  task: FakeLlmTask;
  model: string;
  /** The user messages' text, where the prompt sections are. */
  userText: string;
  /** Characters of all message (and system) text, for the token estimate. */
  promptChars: number;
  maxTokens: number | null;
}

type ContentStep = Exclude<FakeStep, 'hang' | 'drop' | { status: number }>;

/** One provider's wire protocol. */
interface Protocol {
  endpoint: string;
  basePath: string;
  requestIdHeader: string;
  authorize(headers: Record<string, string>, apiKey: string | undefined): Reply | null;
  /** The call, or the 400 (or 404) the provider answers a malformed request with. */
  validate(body: unknown, parsed: boolean, headers: Record<string, string>): Call | Reply;
  answer(call: Call, step: ContentStep, ids: () => string): Reply;
  error(status: number, message?: string): Reply;
  unknownModel(model: string): Reply;
}

const json = (status: number, value: unknown, headers: Record<string, string> = {}): Reply => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(value),
});
const tokens = (chars: number): number => Math.ceil(chars / 4);
const isReply = (v: Call | Reply): v is Reply => 'status' in v;
const isTask = (name: unknown): name is FakeLlmTask =>
  (FAKE_LLM_TASKS as readonly unknown[]).includes(name);

function runTask(call: Call): unknown {
  const sections = parseSections(call.userText);
  return call.task === 'propose_memories'
    ? scriptedReflection(sections)
    : scriptedSummary(sections);
}

/** The result of a content step: the scripted model's, or the one the step gives. */
function resultOf(call: Call, step: ContentStep): unknown {
  return typeof step === 'object' && 'answer' in step ? step.answer : runTask(call);
}

/** A proper prefix of a JSON object's text is never valid JSON: the cut a token limit makes. */
function cutMidJson(text: string): string {
  return text.slice(0, Math.max(1, Math.floor(text.length / 2)));
}

/** The text of a message's content: a string, or an array of `{type:'text', text}` parts. */
function textOf(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === null || content === undefined ? '' : null;
  const parts: string[] = [];
  for (const part of content) {
    if (!isRecord(part) || typeof part.type !== 'string') return null;
    if (part.type === 'text') {
      if (typeof part.text !== 'string') return null;
      parts.push(part.text);
    }
  }
  return parts.join('\n');
}

/** Messages as role + text, or the index of the first malformed one. */
function readMessages(messages: unknown[]): Array<{ role: string; text: string }> | number {
  const out: Array<{ role: string; text: string }> = [];
  for (const [i, m] of messages.entries()) {
    const text = isRecord(m) ? textOf(m.content) : null;
    if (!isRecord(m) || typeof m.role !== 'string' || text === null) return i;
    out.push({ role: m.role, text });
  }
  return out;
}

const positiveInt = (n: unknown): n is number =>
  typeof n === 'number' && Number.isInteger(n) && n > 0;

// ---------------------------------------------------------------------------------- OpenAI

/** [type, code, message] of the errors OpenAI answers by status. */
const OPENAI_ERRORS: Record<number, readonly [string, string | null, string]> = {
  400: ['invalid_request_error', null, 'Invalid request.'],
  401: ['invalid_request_error', 'invalid_api_key', 'Incorrect API key provided'],
  403: ['invalid_request_error', null, 'You are not allowed to sample from this model'],
  404: ['invalid_request_error', null, 'The requested resource was not found.'],
  429: ['requests', 'rate_limit_exceeded', 'Rate limit reached for requests'],
  500: ['server_error', null, 'The server had an error while processing your request. Sorry!'],
  503: ['server_error', null, 'The engine is currently overloaded, please try again later.'],
};

function openaiError(
  status: number,
  message?: string,
  extra: { param?: string | null; code?: string | null } = {},
): Reply {
  const [type, code, text] = OPENAI_ERRORS[status] ?? [
    status >= 500 ? 'server_error' : 'invalid_request_error',
    null,
    `HTTP ${status}`,
  ];
  return json(status, {
    error: {
      message: message ?? text,
      type,
      param: extra.param ?? null,
      code: extra.code === undefined ? code : extra.code,
    },
  });
}

/** Strict mode's schema rules: every object closed and every property required. */
function strictSchemaProblem(node: unknown, context: string[]): string | null {
  if (!isRecord(node)) return null;
  const at = `In context=(${context.map((c) => `'${c}'`).join(', ')})`;
  const types = Array.isArray(node.type) ? node.type : [node.type];
  if (types.includes('object') || isRecord(node.properties)) {
    if (node.additionalProperties !== false) {
      return `${at}, 'additionalProperties' is required to be supplied and to be false.`;
    }
    const keys = isRecord(node.properties) ? Object.keys(node.properties) : [];
    const required: unknown[] = Array.isArray(node.required) ? node.required : [];
    const missing = keys.find((k) => !required.includes(k));
    if (missing !== undefined) {
      return `${at}, 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing}'.`;
    }
  }
  const children: Array<[unknown, string[]]> = [];
  for (const key of ['properties', '$defs', 'definitions']) {
    const map = node[key];
    if (isRecord(map)) {
      for (const [k, v] of Object.entries(map)) children.push([v, [...context, key, k]]);
    }
  }
  if (node.items !== undefined) children.push([node.items, [...context, 'items']]);
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    const list = node[key];
    if (Array.isArray(list)) {
      list.forEach((v, i) => children.push([v, [...context, key, String(i)]]));
    }
  }
  for (const [child, ctx] of children) {
    const problem = strictSchemaProblem(child, ctx);
    if (problem !== null) return problem;
  }
  return null;
}

const OPENAI: Protocol = {
  endpoint: '/v1/chat/completions',
  basePath: '/v1',
  requestIdHeader: 'x-request-id',
  authorize(headers, apiKey) {
    if (apiKey === undefined || headers.authorization === `Bearer ${apiKey}`) return null;
    return openaiError(401);
  },
  validate(body, parsed) {
    if (!parsed || !isRecord(body)) {
      return openaiError(
        400,
        "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
      );
    }
    if (typeof body.model !== 'string' || body.model === '') {
      return openaiError(400, 'you must provide a model parameter');
    }
    if (!Array.isArray(body.messages)) {
      return openaiError(400, "Missing required parameter: 'messages'.", {
        param: 'messages',
        code: 'missing_required_parameter',
      });
    }
    if (body.messages.length === 0) {
      return openaiError(
        400,
        "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        { param: 'messages', code: 'empty_array' },
      );
    }
    const messages = readMessages(body.messages);
    if (typeof messages === 'number') {
      return openaiError(400, `Invalid value for 'messages[${messages}]'.`, {
        param: `messages[${messages}]`,
        code: 'invalid_value',
      });
    }
    const format = body.response_format;
    const schema = isRecord(format) ? format.json_schema : undefined;
    if (!isRecord(format) || format.type !== 'json_schema' || !isRecord(schema)) {
      return openaiError(
        400,
        "fake LLM: answers structured output only; send response_format {type:'json_schema', json_schema:{name, schema, strict:true}}",
        { param: 'response_format' },
      );
    }
    if (typeof schema.name !== 'string' || schema.name === '') {
      return openaiError(400, "Missing required parameter: 'response_format.json_schema.name'.", {
        param: 'response_format.json_schema.name',
        code: 'missing_required_parameter',
      });
    }
    if (schema.strict === true) {
      const root = schema.schema;
      const problem =
        isRecord(root) && root.type === 'object'
          ? strictSchemaProblem(root, [])
          : `schema must be a JSON Schema of 'type: "object"', got 'type: "${String(isRecord(root) ? root.type : root)}"'.`;
      if (problem !== null) {
        return openaiError(400, `Invalid schema for response_format '${schema.name}': ${problem}`, {
          param: 'response_format',
        });
      }
    }
    if (!isTask(schema.name)) {
      return openaiError(
        400,
        `fake LLM: no scripted behaviour for schema '${schema.name}' (known: ${FAKE_LLM_TASKS.join(', ')})`,
        { param: 'response_format' },
      );
    }
    const user = messages.filter((m) => m.role === 'user').map((m) => m.text);
    const limit = body.max_completion_tokens ?? body.max_tokens;
    return {
      task: schema.name,
      model: body.model,
      userText: user.join('\n'),
      promptChars: messages.reduce((n, m) => n + m.text.length, 0),
      maxTokens: positiveInt(limit) ? limit : null,
    };
  },
  answer(call, step, ids) {
    let content: string | null;
    let refusal: string | null = null;
    let finish = 'stop';
    if (step === 'refusal') {
      content = null;
      refusal = REFUSAL_TEXT;
    } else if (typeof step === 'object' && 'content' in step) {
      content = step.content;
    } else if (step === 'truncated') {
      content = cutMidJson(JSON.stringify(resultOf(call, step)));
      finish = 'length';
    } else {
      content = JSON.stringify(resultOf(call, step));
    }
    const completion =
      finish === 'length' && call.maxTokens !== null
        ? call.maxTokens
        : tokens((content ?? refusal ?? '').length);
    const prompt = tokens(call.promptChars);
    return json(200, {
      id: `chatcmpl-${ids()}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: call.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, refusal },
          logprobs: null,
          finish_reason: finish,
        },
      ],
      usage: {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
      },
    });
  },
  error: (status, message) => openaiError(status, message),
  unknownModel: (model) =>
    openaiError(404, `The model \`${model}\` does not exist or you do not have access to it.`, {
      code: 'model_not_found',
    }),
};

// ------------------------------------------------------------------------------- Anthropic

/** [type, message] of the errors Anthropic answers by status. */
const ANTHROPIC_ERRORS: Record<number, readonly [string, string]> = {
  400: ['invalid_request_error', 'Invalid request'],
  401: ['authentication_error', 'invalid x-api-key'],
  403: ['permission_error', 'Your API key does not have permission to use the specified resource.'],
  404: ['not_found_error', 'Not found'],
  413: ['request_too_large', 'Request exceeds the maximum allowed number of bytes.'],
  429: ['rate_limit_error', 'Number of requests has exceeded your rate limit'],
  500: ['api_error', 'Internal server error'],
  529: ['overloaded_error', 'Overloaded'],
};

function anthropicError(status: number, message?: string): Reply {
  const [type, text] = ANTHROPIC_ERRORS[status] ?? [
    status >= 500 ? 'api_error' : 'invalid_request_error',
    `HTTP ${status}`,
  ];
  return json(status, { type: 'error', error: { type, message: message ?? text } });
}

const ANTHROPIC: Protocol = {
  endpoint: '/v1/messages',
  basePath: '',
  requestIdHeader: 'request-id',
  authorize(headers, apiKey) {
    if (apiKey === undefined || headers['x-api-key'] === apiKey) return null;
    return anthropicError(401);
  },
  validate(body, parsed, headers) {
    if (headers['anthropic-version'] === undefined) {
      return anthropicError(400, 'anthropic-version: header is required');
    }
    if (!parsed || !isRecord(body)) {
      return anthropicError(
        400,
        'There was an error parsing the body of your request: not valid JSON',
      );
    }
    if (typeof body.model !== 'string' || body.model === '') {
      return anthropicError(400, 'model: Field required');
    }
    if (!positiveInt(body.max_tokens)) return anthropicError(400, 'max_tokens: Field required');
    if (!Array.isArray(body.messages)) return anthropicError(400, 'messages: Field required');
    if (body.messages.length === 0) {
      return anthropicError(400, 'messages: at least one message is required');
    }
    const messages = readMessages(body.messages);
    if (typeof messages === 'number') {
      return anthropicError(400, `messages.${messages}: invalid message`);
    }
    const system = body.system === undefined ? '' : textOf(body.system);
    if (system === null) {
      return anthropicError(400, 'system: Input should be a valid string or a list of text blocks');
    }
    const tools = body.tools;
    if (!Array.isArray(tools)) {
      return anthropicError(
        400,
        'fake LLM: answers only through a forced tool; send tools and tool_choice',
      );
    }
    for (const [i, tool] of tools.entries()) {
      if (!isRecord(tool) || typeof tool.name !== 'string') {
        return anthropicError(400, `tools.${i}.name: Field required`);
      }
      if (!isRecord(tool.input_schema) || tool.input_schema.type !== 'object') {
        return anthropicError(400, `tools.${i}.custom.input_schema.type: Input should be 'object'`);
      }
    }
    const choice = body.tool_choice;
    if (!isRecord(choice) || choice.type !== 'tool' || typeof choice.name !== 'string') {
      return anthropicError(
        400,
        "fake LLM: send tool_choice {type:'tool', name} to force the tool",
      );
    }
    const name = choice.name;
    if (!tools.some((t: unknown) => isRecord(t) && t.name === name)) {
      return anthropicError(400, `tool_choice.name: tool '${name}' is not in tools`);
    }
    if (!isTask(name)) {
      return anthropicError(
        400,
        `fake LLM: no scripted behaviour for tool '${name}' (known: ${FAKE_LLM_TASKS.join(', ')})`,
      );
    }
    return {
      task: name,
      model: body.model,
      userText: messages
        .filter((m) => m.role === 'user')
        .map((m) => m.text)
        .join('\n'),
      promptChars: system.length + messages.reduce((n, m) => n + m.text.length, 0),
      maxTokens: body.max_tokens,
    };
  },
  answer(call, step, ids) {
    const id = ids();
    let content: unknown[];
    let stop = 'tool_use';
    let output: number;
    if (step === 'refusal') {
      content = [{ type: 'text', text: REFUSAL_TEXT }];
      stop = 'refusal';
      output = tokens(REFUSAL_TEXT.length);
    } else if (typeof step === 'object' && 'content' in step) {
      content = [{ type: 'text', text: step.content }];
      stop = 'end_turn';
      output = tokens(step.content.length);
    } else if (step === 'truncated') {
      content = [{ type: 'tool_use', id: `toolu_${id}`, name: call.task, input: {} }];
      stop = 'max_tokens';
      output = call.maxTokens ?? 0;
    } else {
      const input = resultOf(call, step);
      content = [{ type: 'tool_use', id: `toolu_${id}`, name: call.task, input }];
      output = tokens(JSON.stringify(input).length);
    }
    return json(200, {
      id: `msg_${id}`,
      type: 'message',
      role: 'assistant',
      model: call.model,
      content,
      stop_reason: stop,
      stop_sequence: null,
      usage: { input_tokens: tokens(call.promptChars), output_tokens: output },
    });
  },
  error: (status, message) => anthropicError(status, message),
  unknownModel: (model) => anthropicError(404, `model: ${model}`),
};

const PROTOCOLS: Record<FakeLlmProtocol, Protocol> = { openai: OPENAI, anthropic: ANTHROPIC };

/** Retryable statuses carry `retry-after: 0` unless the step sets its own headers. */
const RETRYABLE = new Set([429, 503, 529]);

function statusReply(
  protocol: Protocol,
  step: { status: number; body?: unknown; headers?: Record<string, string> },
): Reply {
  const base =
    step.body === undefined
      ? protocol.error(step.status)
      : typeof step.body === 'string'
        ? {
            status: step.status,
            headers: { 'content-type': 'text/plain; charset=utf-8' },
            body: step.body,
          }
        : json(step.status, step.body);
  const retry: Record<string, string> = RETRYABLE.has(step.status) ? { 'retry-after': '0' } : {};
  return { ...base, headers: { ...base.headers, ...retry, ...step.headers } };
}

function lowercased(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) {
      out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    }
  }
  return out;
}

function parseJson(raw: string): { body: unknown; parsed: boolean } {
  try {
    return { body: JSON.parse(raw) as unknown, parsed: true };
  } catch {
    return { body: null, parsed: false };
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Start a fake on 127.0.0.1 on a free port. Every request to the provider's endpoint consumes
 * one script step: `hang`, `drop` and `status` steps act before the key and the body are
 * checked (the provider is failing), content steps after (a malformed request still gets its
 * 400). Other paths get the provider's 404 and consume nothing.
 */
export async function startFakeLlm(config: FakeLlmConfig): Promise<FakeLlm> {
  const protocol = PROTOCOLS[config.protocol];
  // the caller's own array: a test may push more steps while the fake runs
  const script = config.script ?? [];
  const requests: RecordedRequest[] = [];
  const hanging = new Set<ServerResponse>();
  let served = 0;
  const ids = (): string => `fake${String(++served).padStart(20, '0')}`;

  const send = (res: ServerResponse, reply: Reply): void => {
    res.writeHead(reply.status, { ...reply.headers, [protocol.requestIdHeader]: `req_${ids()}` });
    res.end(reply.body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = await readBody(req);
    const headers = lowercased(req.headers);
    const { body, parsed } = parseJson(raw);
    const path = new URL(req.url ?? '/', 'http://fake.invalid').pathname;
    const method = req.method ?? 'GET';
    requests.push({ method, path, headers, body, raw });
    if (path !== protocol.endpoint) {
      return send(res, protocol.error(404, `Invalid URL (${method} ${path})`));
    }
    if (method !== 'POST') {
      return send(res, protocol.error(405, `Method ${method} not allowed on ${path}`));
    }

    const step = script.shift() ?? 'scripted';
    if (step === 'hang') {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    if (step === 'drop') {
      req.socket.destroy();
      return;
    }
    if (typeof step === 'object' && 'status' in step) return send(res, statusReply(protocol, step));
    const denied = protocol.authorize(headers, config.apiKey);
    if (denied !== null) return send(res, denied);
    const call = protocol.validate(body, parsed, headers);
    if (isReply(call)) return send(res, call);
    if (config.model !== undefined && call.model !== config.model) {
      return send(res, protocol.unknownModel(call.model));
    }
    send(res, protocol.answer(call, step, ids));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      send(
        res,
        protocol.error(500, `fake LLM failed: ${err instanceof Error ? err.message : String(err)}`),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${port}${protocol.basePath}`,
    requests,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        for (const res of hanging) res.destroy();
        hanging.clear();
        server.close((err) => (err === undefined ? resolve() : reject(err)));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
