import { EngineError } from '../domain/errors.js';

/**
 * Turns text into vectors. memledger ships an OpenAI-compatible HTTP client
 * (`openAiEmbedder`); a host can pass any object with this shape (a local model, say).
 */
export interface Embedder {
  /** Names the model, so vectors from different models are never compared. */
  readonly model: string;
  /** One vector per text, in order, all of one length. */
  embed(texts: readonly string[]): Promise<number[][]>;
}

export interface OpenAiEmbedderOptions {
  /** The API base, `/v1` included: `https://api.openai.com/v1`, `http://localhost:11434/v1`. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Asked of models that can shorten their vectors (OpenAI's text-embedding-3). */
  dimensions?: number;
  timeoutMs?: number;
  /** Texts per request (default 64). */
  batchSize?: number;
}

function fail(message: string, cause?: unknown): never {
  throw new EngineError('EMBEDDER_FAILED', message, cause === undefined ? undefined : { cause });
}

/** Checks an `/embeddings` answer: one finite vector per input, by index, all of one length. */
export function parseEmbeddingsResponse(body: unknown, count: number): number[][] {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) fail('the embeddings answer has no "data" list');
  if (data.length !== count) fail(`asked for ${count} embeddings, got ${data.length}`);
  const out: number[][] = new Array<number[]>(count);
  for (const item of data as { index?: unknown; embedding?: unknown }[]) {
    const { index, embedding } = item ?? {};
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count) {
      fail(`an embedding has an index out of range: ${String(index)}`);
    }
    if (out[index] !== undefined) fail(`two embeddings for index ${index}`);
    if (!Array.isArray(embedding) || embedding.length === 0) {
      fail(`embedding ${index} is not a list of numbers`);
    }
    if (!embedding.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      fail(`embedding ${index} holds a value that is not a finite number`);
    }
    out[index] = embedding as number[];
  }
  const dims = out[0]?.length ?? 0;
  if (out.some((v) => v.length !== dims)) fail('the embeddings differ in length');
  return out;
}

/** A client for any server that speaks OpenAI's `POST /v1/embeddings` (OpenAI, Ollama, vLLM, TEI). */
export function openAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  let base: URL;
  try {
    base = new URL(options.baseUrl.replace(/\/+$/, '') + '/embeddings');
  } catch {
    throw new EngineError('INVALID_ARGUMENT', `not a URL: "${options.baseUrl}"`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new EngineError('INVALID_ARGUMENT', `an embeddings URL is http or https: ${base.href}`);
  }
  if (options.model.trim() === '') throw new EngineError('INVALID_ARGUMENT', 'a model is required');
  const batchSize = options.batchSize ?? 64;
  const timeoutMs = options.timeoutMs ?? 30_000;
  return {
    model: options.model,
    async embed(texts) {
      const out: number[][] = [];
      for (let i = 0; i < texts.length; i += batchSize) {
        const input = texts.slice(i, i + batchSize);
        let res: Response;
        try {
          res = await fetch(base, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              ...(options.apiKey === undefined
                ? {}
                : { authorization: `Bearer ${options.apiKey}` }),
            },
            body: JSON.stringify({
              model: options.model,
              input,
              encoding_format: 'float',
              ...(options.dimensions === undefined ? {} : { dimensions: options.dimensions }),
            }),
            signal: AbortSignal.timeout(timeoutMs),
          });
        } catch (err) {
          fail(`cannot reach ${base.origin}: ${(err as Error).message}`, err);
        }
        const text = await res.text();
        if (!res.ok) fail(`${base.origin} answered ${res.status}: ${text.slice(0, 200)}`);
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch (err) {
          fail(`${base.origin} answered something that is not JSON`, err);
        }
        out.push(...parseEmbeddingsResponse(body, input.length));
      }
      return out;
    },
  };
}
