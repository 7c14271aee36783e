// The local embedder against the real runtimes (onnxruntime-web, tokenizers.js) and a toy model
// built here: no network, no downloaded weights.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { localEmbedder } from '../src/index.js';
import { code } from './support/errors.js';
import { tinyEncoder } from './support/tiny-onnx.js';

/** The vocabulary, by id, and the model's embedding table: one row of 4 numbers per word. */
const VOCAB = [
  '[PAD]',
  '[UNK]',
  '[CLS]',
  '[SEP]',
  'red',
  'green',
  'apple',
  'pear',
  'fast',
  'car',
  'slow',
  'broken',
] as const;
type Word = (typeof VOCAB)[number];
const ROWS: Record<Word, number[]> = {
  '[PAD]': [0, 0, 0, 0],
  '[UNK]': [0.5, 0.5, 0.5, 0.5],
  '[CLS]': [0, 0, 0, 3],
  '[SEP]': [0, 0, 3, 0],
  red: [2, 0, 0, 1],
  green: [0, 2, 0, 1],
  apple: [1, 1, 3, 0],
  pear: [1, 2, 2, 0],
  fast: [0, 0, -1, 4],
  car: [-1, 0, 0, 3],
  slow: [0, -1, 1, 2],
  broken: [Number.NaN, 0, 0, 0],
};
const row = (w: Word) => ROWS[w];

function mean(words: readonly Word[]): number[] {
  return [0, 1, 2, 3].map(
    (k) => words.reduce((s, w) => s + (row(w)[k] as number), 0) / words.length,
  );
}
function unit(v: readonly number[]): number[] {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}
function cosine(a: readonly number[], b: readonly number[]): number {
  return a.reduce((s, x, i) => s + x * (b[i] as number), 0) / (Math.hypot(...a) * Math.hypot(...b));
}
function expectClose(actual: readonly number[] | undefined, expected: readonly number[]): void {
  expect(actual).toHaveLength(expected.length);
  expected.forEach((x, i) => expect(actual?.[i]).toBeCloseTo(x, 5));
}

/** A tokenizer.json as Hugging Face writes it: WordPiece, whitespace pre-tokenizer. */
function tokenizerJson(bert: boolean) {
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: VOCAB.slice(0, 4).map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: { type: 'Whitespace' },
    // `bert` wraps every text as [CLS] ... [SEP], as BERT-style exports do.
    post_processor: bert ? { type: 'BertProcessing', cls: ['[CLS]', 2], sep: ['[SEP]', 3] } : null,
    decoder: null,
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(VOCAB.map((w, id) => [w, id])),
    },
  };
}

const root = mkdtempSync(join(tmpdir(), 'memledger-local-embedder-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface DirOptions {
  bert?: boolean;
  pooled?: boolean;
  /** Where the model goes: Hugging Face's `onnx/` (default) or the directory itself. */
  modelAt?: 'onnx' | 'root' | 'none';
  model?: Uint8Array;
  tokenizer?: string | null;
}
let dirs = 0;
function modelDir(name: string, options: DirOptions = {}): string {
  const dir = join(root, `${++dirs}-${name}`);
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  const bytes =
    options.model ??
    tinyEncoder({
      rows: VOCAB.map(row),
      pooled: options.pooled === true,
      tokenTypeIds: options.pooled === true,
    });
  const at = options.modelAt ?? 'onnx';
  if (at !== 'none') writeFileSync(join(dir, at === 'onnx' ? 'onnx' : '', 'model.onnx'), bytes);
  const tokenizer =
    options.tokenizer === undefined
      ? JSON.stringify(tokenizerJson(options.bert === true))
      : options.tokenizer;
  if (tokenizer !== null) writeFileSync(join(dir, 'tokenizer.json'), tokenizer);
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ pad_token: '[PAD]' }));
  return dir;
}

describe('local embedder', () => {
  const dir = modelDir('tiny-minilm');

  it('gives the normalized mean of the token vectors, named after the directory', async () => {
    const e = await localEmbedder({ modelPath: dir });
    expect(e.model).toBe(`local:${basename(dir)}`);
    const [v] = await e.embed(['red apple']);
    expectClose(v, unit(mean(['red', 'apple'])));
    expect(Math.hypot(...(v ?? []))).toBeCloseTo(1, 6);

    // without normalizing: the plain mean; with `cls`: the first token alone
    const raw = await localEmbedder({ modelPath: dir, normalize: false, model: 'mini' });
    expect(raw.model).toBe('mini');
    expectClose((await raw.embed(['red apple']))[0], mean(['red', 'apple']));
    const cls = await localEmbedder({ modelPath: dir, pooling: 'cls', normalize: false });
    expectClose((await cls.embed(['red apple']))[0], row('red'));
    // words it does not know are [UNK]
    expectClose((await raw.embed(['red plum']))[0], mean(['red', '[UNK]']));
  });

  it('does not let padding in a batch change a text’s vector', async () => {
    // unnormalized, so a mean over the padded length (here 3 positions) would show
    const e = await localEmbedder({ modelPath: dir, normalize: false });
    const alone = (await e.embed(['red']))[0];
    const padded = (await e.embed(['red apple fast', 'red']))[1];
    expectClose(alone, row('red'));
    expectClose(padded, row('red'));
    expect(padded?.[0]).not.toBeCloseTo((row('red')[0] as number) / 3, 3);
  });

  it('puts texts that share words closer than texts that share none', async () => {
    const e = await localEmbedder({ modelPath: dir });
    const [a, b, c] = await e.embed(['red apple', 'green apple', 'fast car']);
    const shared = cosine(a ?? [], b ?? []);
    const none = cosine(a ?? [], c ?? []);
    expect(shared).toBeGreaterThan(0.6);
    expect(none).toBeLessThan(0.4);
    expect(shared).toBeGreaterThan(none);
  });

  it('keeps the order of the texts across batches', async () => {
    const texts = ['red', 'green apple', 'pear', 'fast car', 'slow'];
    const one = await localEmbedder({ modelPath: dir, batchSize: 2 });
    const vectors = await one.embed(texts);
    const single = await Promise.all(texts.map(async (t) => (await one.embed([t]))[0] ?? []));
    expect(vectors).toHaveLength(texts.length);
    vectors.forEach((v, i) => expectClose(v, single[i] ?? []));
    expect(cosine(vectors[0] ?? [], vectors[2] ?? [])).toBeLessThan(0.99);
    expect(await one.embed([])).toEqual([]);
  });

  it('cuts a long text to maxTokens, keeping the closing [SEP]', async () => {
    const bert = modelDir('bert-like', { bert: true });
    const e = await localEmbedder({ modelPath: bert, normalize: false, maxTokens: 3 });
    expectClose((await e.embed(['red apple fast']))[0], mean(['[CLS]', 'red', '[SEP]']));
    const wide = await localEmbedder({ modelPath: bert, normalize: false });
    expectClose(
      (await wide.embed(['red apple fast']))[0],
      mean(['[CLS]', 'red', 'apple', 'fast', '[SEP]']),
    );
  });

  it('uses an already pooled output as it is, and feeds token_type_ids when asked', async () => {
    // this model sums over the sequence itself and declares a token_type_ids input
    const pooled = modelDir('pooled', { pooled: true, modelAt: 'root' });
    const e = await localEmbedder({ modelPath: pooled, normalize: false });
    expectClose(
      (await e.embed(['red apple']))[0],
      row('red').map((x, k) => x + (row('apple')[k] as number)),
    );
  });

  it('refuses a vector that is not finite', async () => {
    const e = await localEmbedder({ modelPath: dir });
    expect(await e.embed(['red'])).toHaveLength(1);
    expect(await code(e.embed(['red', 'broken apple']))).toBe('EMBEDDER_FAILED');
  });

  it('fails early, naming the path, on a directory, tokenizer or model it cannot use', async () => {
    const missing = join(root, 'no-such-model');
    expect(await code(localEmbedder({ modelPath: missing }))).toBe('EMBEDDER_FAILED');
    await expect(localEmbedder({ modelPath: missing })).rejects.toThrow(missing);

    const noTokenizer = modelDir('no-tokenizer', { tokenizer: null });
    expect(await code(localEmbedder({ modelPath: noTokenizer }))).toBe('EMBEDDER_FAILED');
    await expect(localEmbedder({ modelPath: noTokenizer })).rejects.toThrow(
      join(noTokenizer, 'tokenizer.json'),
    );
    const badTokenizer = modelDir('bad-tokenizer', { tokenizer: '{"model": ' });
    expect(await code(localEmbedder({ modelPath: badTokenizer }))).toBe('EMBEDDER_FAILED');

    const corrupt = modelDir('corrupt', { model: randomBytes(512) });
    expect(await code(localEmbedder({ modelPath: corrupt }))).toBe('EMBEDDER_FAILED');
    await expect(localEmbedder({ modelPath: corrupt })).rejects.toThrow(
      join(corrupt, 'onnx', 'model.onnx'),
    );
    const noModel = modelDir('no-model', { modelAt: 'none' });
    expect(await code(localEmbedder({ modelPath: noModel }))).toBe('EMBEDDER_FAILED');

    expect(await code(localEmbedder({ modelPath: '' }))).toBe('INVALID_ARGUMENT');
    expect(await code(localEmbedder({ modelPath: dir, batchSize: 0 }))).toBe('INVALID_ARGUMENT');
    expect(await code(localEmbedder({ modelPath: dir, maxTokens: 1.5 }))).toBe('INVALID_ARGUMENT');
  });

  it('says what to install when the runtimes are missing', async () => {
    vi.resetModules();
    vi.doMock('onnxruntime-web', () => {
      throw new Error("Cannot find package 'onnxruntime-web'");
    });
    try {
      const fresh = await import('../src/recall/local-embedder.js');
      await expect(fresh.localEmbedder({ modelPath: dir })).rejects.toMatchObject({
        code: 'EMBEDDER_FAILED',
        message: expect.stringContaining(
          'npm i onnxruntime-web@1.30.0 @huggingface/tokenizers@0.2.0',
        ),
      });
    } finally {
      vi.doUnmock('onnxruntime-web');
      vi.resetModules();
    }
  });
});

describe('local embedder in the engine', () => {
  it('stores vectors with embedPending and recall finds by them, from the API and the CLI', async () => {
    const { createEngine } = await import('../src/index.js');
    const { runCliCaptured } = await import('./support/cli.js');
    const dir = modelDir('engine-model');
    const db = join(root, 'engine-store');
    const engine = await createEngine({ db, embedder: await localEmbedder({ modelPath: dir }) });
    try {
      await engine.subjects.create();
      const me = engine.subject();
      const s = await me.sessions.create();
      for (const content of ['red apple', 'fast car']) {
        await me.turns.add({ sessionId: s.id, role: 'user', content });
      }
      // "pear" is in no turn: words alone find nothing (negative control)
      expect(await me.recall.search('pear', { vectors: false })).toEqual([]);
      expect(await me.vectors.embedPending()).toMatchObject({ turns: 2, remaining: false });
      const found = await me.recall.search('pear', { kinds: ['turn'] });
      expect(found[0]?.text).toBe('red apple');
    } finally {
      await engine.close();
    }
    const cli = await runCliCaptured(
      ['recall', 'pear', '--json', '--kinds', 'turn', '--embedder-path', dir, '--db', db],
      {},
    );
    expect(cli.code).toBe(0);
    expect((cli.json() as { items: { text: string }[] }).items[0]?.text).toBe('red apple');
  });
});
