/**
 * A fake OpenAI Responses API on a real `node:http` server on loopback: `POST /v1/responses`
 * answers with the API's own JSON shape, output items of type `message`, `function_call` and
 * `web_search_call`, from a queue of scripted responses; with `stream: true`, as server-sent
 * events (`response.created`, the items and their text deltas, `response.completed`). Every request is
 * kept, so a test can read what the model was sent (the arrival, the history, the tools).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One output item of a scripted response. */
export type FakeOutput =
  | { text: string; citations?: string[] }
  | { call: string; arguments: Record<string, unknown> }
  | { webSearch: string[]; failed?: boolean };

/** A request as the fake received it. */
export interface ResponsesRequest {
  path: string;
  authorization: string | undefined;
  body: {
    model?: string;
    instructions?: string;
    input?: unknown;
    tools?: Array<{ type: string; name?: string; parameters?: unknown }>;
    stream?: boolean;
    [key: string]: unknown;
  };
}

export interface FakeResponses {
  /** The base URL the `OpenAI` client takes (`http://127.0.0.1:N/v1`). */
  readonly baseURL: string;
  /** Every request received, in order. */
  readonly requests: ResponsesRequest[];
  /** Queues the next responses (each a list of output items), consumed one per request. */
  script(...responses: FakeOutput[][]): void;
  /** How many scripted responses are still waiting. */
  readonly pending: number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, doc: unknown): void {
  const body = JSON.stringify(doc);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** The provider's error shape; 400 so the client does not retry. */
const apiError = (message: string) => ({
  error: { message, type: 'invalid_request_error', param: null, code: null },
});

export async function startFakeResponses(): Promise<FakeResponses> {
  const queue: FakeOutput[][] = [];
  const requests: ResponsesRequest[] = [];
  let n = 0;

  const outputItem = (o: FakeOutput): Record<string, unknown> => {
    n += 1;
    if ('text' in o) {
      return {
        type: 'message',
        id: `msg_${n}`,
        status: 'completed',
        role: 'assistant',
        content: [
          {
            type: 'output_text',
            text: o.text,
            annotations: (o.citations ?? []).map((url) => ({
              type: 'url_citation',
              url,
              title: url,
              start_index: 0,
              end_index: 0,
            })),
          },
        ],
      };
    }
    if ('call' in o) {
      return {
        type: 'function_call',
        id: `fc_${n}`,
        call_id: `call_${n}`,
        name: o.call,
        arguments: JSON.stringify(o.arguments),
        status: 'completed',
      };
    }
    return {
      type: 'web_search_call',
      id: `ws_${n}`,
      status: o.failed === true ? 'failed' : 'completed',
      action: {
        type: 'search',
        query: 'search',
        sources: o.webSearch.map((url) => ({ type: 'url', url })),
      },
    };
  };

  const server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      const path = (req.url ?? '').split('?')[0] ?? '';
      if (req.method !== 'POST' || path !== '/v1/responses') {
        sendJson(res, 404, apiError(`no route ${req.method ?? '?'} ${path}`));
        return;
      }
      let body: ResponsesRequest['body'];
      try {
        body = JSON.parse(raw) as ResponsesRequest['body'];
      } catch {
        sendJson(res, 400, apiError('the body is not JSON'));
        return;
      }
      requests.push({ path, authorization: req.headers.authorization, body });
      const step = queue.shift();
      if (step === undefined) {
        sendJson(res, 400, apiError('the fake has no scripted response left'));
        return;
      }
      const response = {
        id: `resp_${requests.length}`,
        object: 'response',
        created_at: Math.floor(Date.now() / 1000),
        status: 'completed',
        model: body.model ?? 'fake',
        output: step.map(outputItem),
        parallel_tool_calls: true,
        tool_choice: 'auto',
        tools: [],
        usage: {
          input_tokens: 10,
          output_tokens: 5,
          total_tokens: 15,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens_details: { reasoning_tokens: 0 },
        },
      };
      if (body.stream !== true) {
        sendJson(res, 200, response);
        return;
      }
      // server-sent events: created, each text as one delta, completed with the whole response
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      let seq = 0;
      const event = (type: string, data: Record<string, unknown>) =>
        res.write(
          `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`,
        );
      event('response.created', {
        response: { ...response, status: 'in_progress', output: [] },
      });
      response.output.forEach((item, i) => {
        event('response.output_item.added', { output_index: i, item });
        const content = (item as { content?: Array<{ text?: string }> }).content;
        const text = content?.[0]?.text;
        if (typeof text === 'string') {
          event('response.output_text.delta', {
            item_id: item.id,
            output_index: i,
            content_index: 0,
            delta: text,
          });
        }
        event('response.output_item.done', { output_index: i, item });
      });
      event('response.completed', { response });
      res.end();
    })().catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, apiError(String(err)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (...responses) => void queue.push(...responses),
    get pending() {
      return queue.length;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/** The text of every input message of a request with this role, in order. */
export function inputTexts(request: ResponsesRequest, role: string): string[] {
  const input = Array.isArray(request.body.input) ? (request.body.input as unknown[]) : [];
  return input
    .filter(
      (i): i is { role: string; content: unknown } =>
        typeof i === 'object' && i !== null && (i as { role?: unknown }).role === role,
    )
    .map((i) =>
      typeof i.content === 'string'
        ? i.content
        : Array.isArray(i.content)
          ? i.content
              .map((p: unknown) =>
                typeof p === 'object' &&
                p !== null &&
                typeof (p as { text?: unknown }).text === 'string'
                  ? (p as { text: string }).text
                  : '',
              )
              .join('')
          : '',
    );
}
