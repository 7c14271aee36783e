import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAiEmbedder } from '../src/index.js';
import { parseEmbeddingsResponse } from '../src/recall/embedder.js';
import { code } from './support/errors.js';

/** A fake embeddings server speaking OpenAI's protocol; `mode` picks how it misbehaves. */
let mode: 'ok' | 'short' | 'nan' | 'error' | 'not-json' | 'ragged' = 'ok';
const seen: { auth: string | undefined; body: { model: string; input: string[] } }[] = [];

function vectorFor(text: string, dims: number): number[] {
  const v = Array.from(
    { length: dims },
    (_, i) => ((text.charCodeAt(i % text.length) * (i + 1)) % 97) / 97,
  );
  return v;
}

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return body;
}

let server: Server;
let baseUrl = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.writeHead(404).end('{"error":{"message":"not found"}}');
        return;
      }
      const body = JSON.parse(raw) as { model: string; input: string[]; dimensions?: number };
      seen.push({ auth: req.headers.authorization, body });
      if (mode === 'error') {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom"}');
        return;
      }
      if (mode === 'not-json') {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html>proxy</html>');
        return;
      }
      const dims = body.dimensions ?? 8;
      let data = body.input.map((text, index) => ({
        object: 'embedding',
        index,
        embedding: vectorFor(text, mode === 'ragged' && index === 1 ? dims + 1 : dims),
      }));
      if (mode === 'short') data = data.slice(1);
      // answers come back out of order: the client must place them by index
      data.reverse();
      const json = JSON.stringify({ object: 'list', data, model: body.model }).replace(
        mode === 'nan' ? /\d+\.\d+/ : /$^/,
        'NaN',
      );
      res.writeHead(200, { 'content-type': 'application/json' }).end(json);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('OpenAI-compatible embedder', () => {
  it('sends the model, input and key, batches, and returns vectors in input order', async () => {
    mode = 'ok';
    seen.length = 0;
    const e = openAiEmbedder({
      baseUrl,
      model: 'nomic-embed-text',
      apiKey: 'sk-test',
      batchSize: 2,
    });
    const texts = ['alpha', 'beta', 'gamma'];
    const vectors = await e.embed(texts);
    expect(vectors).toEqual(texts.map((t) => vectorFor(t, 8)));
    expect(seen.map((s) => s.body.input)).toEqual([['alpha', 'beta'], ['gamma']]);
    expect(seen[0]).toMatchObject({ auth: 'Bearer sk-test', body: { model: 'nomic-embed-text' } });
    const short = openAiEmbedder({ baseUrl: `${baseUrl}/`, model: 'm', dimensions: 4 });
    expect((await short.embed(['x']))[0]).toHaveLength(4);
  });

  it('refuses answers that do not add up, and servers that fail', async () => {
    const e = openAiEmbedder({ baseUrl, model: 'm' });
    for (const bad of ['short', 'nan', 'error', 'not-json', 'ragged'] as const) {
      mode = bad;
      expect(await code(e.embed(['one', 'two'])), bad).toBe('EMBEDDER_FAILED');
    }
    mode = 'ok';
    const nowhere = openAiEmbedder({
      baseUrl: 'http://127.0.0.1:9/v1',
      model: 'm',
      timeoutMs: 2000,
    });
    expect(await code(nowhere.embed(['x']))).toBe('EMBEDDER_FAILED');
    expect(() => openAiEmbedder({ baseUrl: 'ftp://example.org', model: 'm' })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });

  it('checks a parsed answer on its own', () => {
    const ok = { data: [{ index: 0, embedding: [1, 2] }] };
    expect(parseEmbeddingsResponse(ok, 1)).toEqual([[1, 2]]);
    expect(() => parseEmbeddingsResponse({ data: [{ index: 3, embedding: [1] }] }, 1)).toThrow(
      expect.objectContaining({ code: 'EMBEDDER_FAILED' }),
    );
    expect(() => parseEmbeddingsResponse({}, 1)).toThrow(
      expect.objectContaining({ code: 'EMBEDDER_FAILED' }),
    );
  });
});
