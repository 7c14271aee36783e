import { readFile, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type * as Ort from 'onnxruntime-web';
import type * as Hf from '@huggingface/tokenizers';
import { EngineError } from '../domain/errors.js';
import type { Embedder } from './embedder.js';

export interface LocalEmbedderOptions {
  /**
   * A directory as Hugging Face exports sentence-embedding models for ONNX: `tokenizer.json`,
   * `tokenizer_config.json` (optional) and the model at `onnx/model.onnx` or `model.onnx`.
   */
  modelPath: string;
  /** Names the model in stored vectors (default `local:<directory name>`). */
  model?: string;
  /** Mean over the real tokens (default), or the first token's state (`cls`). */
  pooling?: 'mean' | 'cls';
  /** Scale each vector to length 1 (default true). */
  normalize?: boolean;
  /** Tokens kept per text, special tokens included (default 256). */
  maxTokens?: number;
  /** Texts per model run (default 16). */
  batchSize?: number;
}

/** The inputs the embedder knows how to fill; a model wanting another one is refused at load. */
const KNOWN_INPUTS = ['input_ids', 'attention_mask', 'token_type_ids'];

const INSTALL_HINT =
  'the local embedder needs onnxruntime-web and @huggingface/tokenizers: ' +
  'npm i onnxruntime-web@1.30.0 @huggingface/tokenizers@0.2.0';

function fail(message: string, cause?: unknown): never {
  throw new EngineError('EMBEDDER_FAILED', message, cause === undefined ? undefined : { cause });
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new EngineError('INVALID_ARGUMENT', `${name} is a positive integer, got ${value}`);
  }
  return value;
}

async function readJson(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    fail(`cannot read ${path}: ${(err as Error).message}`, err);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    fail(`${path} is not JSON: ${(err as Error).message}`, err);
  }
}

/** The first of `paths` that can be read, as bytes. */
async function readFirst(paths: readonly string[]): Promise<{ path: string; bytes: Uint8Array }> {
  for (const path of paths) {
    try {
      return { path, bytes: await readFile(path) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        fail(`cannot read ${path}: ${(err as Error).message}`, err);
      }
    }
  }
  return fail(`no model file: looked for ${paths.join(' and ')}`);
}

/**
 * The id padding uses: `padding.pad_id` in tokenizer.json, else the config's `pad_token` (a
 * string, or `{ content }` in older exports), else 0. Padded positions are masked out anyway.
 */
function padId(tokenizerJson: unknown, config: Record<string, unknown>, tokenizer: Hf.Tokenizer) {
  const padding = (tokenizerJson as { padding?: { pad_id?: unknown } | null }).padding;
  if (Number.isInteger(padding?.pad_id)) return padding?.pad_id as number;
  const token = config.pad_token;
  const content =
    typeof token === 'string' ? token : (token as { content?: unknown } | null)?.content;
  return (typeof content === 'string' ? tokenizer.token_to_id(content) : undefined) ?? 0;
}

/**
 * Cuts `ids` to `max` tokens, keeping the special tokens the tokenizer closed the text with
 * (`[SEP]`, `</s>`): tokenizers.js has no truncation of its own.
 */
function truncate(ids: number[], max: number, special: ReadonlySet<number>): number[] {
  if (ids.length <= max) return ids;
  let tail = 0;
  while (tail < max - 1 && special.has(ids[ids.length - 1 - tail] ?? -1)) tail++;
  return [...ids.slice(0, max - tail), ...ids.slice(ids.length - tail)];
}

/**
 * An embedder running a sentence-embedding model on this machine, with onnxruntime-web
 * (WebAssembly) and tokenizers.js. Both are optional peer dependencies, loaded only here.
 * Loads everything up front, so a bad path or model fails at once, not at the first `embed`.
 */
export async function localEmbedder(options: LocalEmbedderOptions): Promise<Embedder> {
  if (options.modelPath.trim() === '') {
    throw new EngineError('INVALID_ARGUMENT', 'a model path is required');
  }
  if (options.model !== undefined && options.model.trim() === '') {
    throw new EngineError('INVALID_ARGUMENT', 'a model name, when given, is not empty');
  }
  const pooling = options.pooling ?? 'mean';
  if (pooling !== 'mean' && pooling !== 'cls') {
    throw new EngineError('INVALID_ARGUMENT', `pooling is "mean" or "cls", got "${pooling}"`);
  }
  const normalize = options.normalize ?? true;
  const maxTokens = positiveInteger('maxTokens', options.maxTokens ?? 256);
  const batchSize = positiveInteger('batchSize', options.batchSize ?? 16);

  let ort: typeof Ort;
  let hf: typeof Hf;
  try {
    [ort, hf] = await Promise.all([import('onnxruntime-web'), import('@huggingface/tokenizers')]);
  } catch (err) {
    fail(INSTALL_HINT, err);
  }

  const dir = resolve(options.modelPath);
  const isDir = await stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir) fail(`no model directory at ${dir}`);

  const tokenizerPath = join(dir, 'tokenizer.json');
  const tokenizerJson = await readJson(tokenizerPath);
  const configPath = join(dir, 'tokenizer_config.json');
  const config = (await stat(configPath).then(
    () => readJson(configPath),
    () => ({}),
  )) as Record<string, unknown>;
  let tokenizer: Hf.Tokenizer;
  try {
    tokenizer = new hf.Tokenizer(tokenizerJson as object, config);
  } catch (err) {
    fail(`cannot load the tokenizer in ${tokenizerPath}: ${(err as Error).message}`, err);
  }
  const pad = padId(tokenizerJson, config, tokenizer);
  const special = new Set(
    [...tokenizer.get_added_tokens_decoder().values()].filter((t) => t.special).map((t) => t.id),
  );

  const { path: modelFile, bytes } = await readFirst([
    join(dir, 'onnx', 'model.onnx'),
    join(dir, 'model.onnx'),
  ]);
  // One thread: the threaded build would start worker threads, which a library should not.
  ort.env.wasm.numThreads = 1;
  let session: Ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
  } catch (err) {
    fail(`cannot load the model ${modelFile}: ${(err as Error).message}`, err);
  }
  const unknown = session.inputNames.filter((name) => !KNOWN_INPUTS.includes(name));
  if (unknown.length > 0) fail(`${modelFile} wants inputs this embedder cannot fill: ${unknown}`);
  const wantsTypeIds = session.inputNames.includes('token_type_ids');
  // The token states if the model names them, else its first output (maybe already pooled).
  const outputName =
    session.outputNames.find((name) => name === 'last_hidden_state') ??
    session.outputNames[0] ??
    fail(`${modelFile} has no outputs`);

  /** One run of the model over `texts`: one vector per text. */
  async function embedBatch(texts: readonly string[]): Promise<number[][]> {
    let encoded: number[][];
    try {
      encoded = texts.map((t) => truncate(tokenizer.encode(t).ids, maxTokens, special));
    } catch (err) {
      fail(`the tokenizer failed: ${(err as Error).message}`, err);
    }
    const empty = encoded.findIndex((ids) => ids.length === 0);
    if (empty >= 0) fail(`text ${empty} of the batch gives no tokens`);

    // Pad every text to the longest; the mask tells the model (and the pooling) what is real.
    const seq = Math.max(...encoded.map((ids) => ids.length));
    const ids = new BigInt64Array(texts.length * seq).fill(BigInt(pad));
    const mask = new BigInt64Array(texts.length * seq);
    encoded.forEach((row, i) => {
      row.forEach((id, j) => {
        ids[i * seq + j] = BigInt(id);
        mask[i * seq + j] = 1n;
      });
    });
    const shape = [texts.length, seq];
    const feeds: Record<string, Ort.Tensor> = {
      input_ids: new ort.Tensor('int64', ids, shape),
      attention_mask: new ort.Tensor('int64', mask, shape),
    };
    if (wantsTypeIds) {
      feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(ids.length), shape);
    }

    let output: Ort.Tensor | undefined;
    try {
      output = (await session.run(feeds))[outputName];
    } catch (err) {
      fail(`the model failed: ${(err as Error).message}`, err);
    }
    if (output?.type !== 'float32') fail(`output "${outputName}" is not a float32 tensor`);
    const data = output.data as Float32Array;
    const dims = output.dims;

    const vectors: number[][] = [];
    if (dims.length === 2 && dims[0] === texts.length) {
      // Already pooled by the model ([batch, dims], e.g. `sentence_embedding`).
      const d = dims[1] as number;
      for (let i = 0; i < texts.length; i++) {
        vectors.push(Array.from(data.subarray(i * d, i * d + d)));
      }
    } else if (dims.length === 3 && dims[0] === texts.length && dims[1] === seq) {
      // Token states [batch, seq, dims]: pool them. A text's real tokens are the first
      // row.length positions (the mask's ones), so the mean runs over those alone.
      const d = dims[2] as number;
      encoded.forEach((row, i) => {
        const v = new Array<number>(d).fill(0);
        const count = pooling === 'cls' ? 1 : row.length;
        for (let j = 0; j < count; j++) {
          const at = (i * seq + j) * d;
          for (let k = 0; k < d; k++) v[k] = (v[k] as number) + (data[at + k] as number);
        }
        vectors.push(v.map((x) => x / count));
      });
    } else {
      fail(`output "${outputName}" has shape [${dims.join(', ')}], not [batch, (seq,) dims]`);
    }

    return vectors.map((v, i) => {
      if (!v.every(Number.isFinite)) {
        fail(`the vector for text ${i} of the batch holds a value that is not finite`);
      }
      if (!normalize) return v;
      const norm = Math.hypot(...v);
      // a zero vector has no direction to keep: it stays as it is
      return norm > 0 ? v.map((x) => x / norm) : v;
    });
  }

  return {
    model: options.model ?? `local:${basename(dir)}`,
    async embed(texts) {
      const out: number[][] = [];
      for (let i = 0; i < texts.length; i += batchSize) {
        out.push(...(await embedBatch(texts.slice(i, i + batchSize))));
      }
      return out;
    },
  };
}
