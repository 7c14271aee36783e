import { EngineError } from '../src/domain/errors.js';
import type { Embedder } from '../src/index.js';
import type { CommandContext } from './context.js';
import type { OptionSpecs } from './options.js';

/** Options of the commands that embed (`embed`, `recall`, `bench locomo`). */
export const EMBEDDER_OPTIONS = {
  'embedder-url': {
    kind: 'text',
    value: 'URL',
    help: 'an OpenAI-compatible /v1/embeddings server (else $MEMLEDGER_EMBEDDER_URL)',
  },
  'embedder-model': {
    kind: 'text',
    value: 'M',
    help: 'the embedding model (else $MEMLEDGER_EMBEDDER_MODEL)',
  },
  'embedder-path': {
    kind: 'text',
    value: 'DIR',
    help: 'a local ONNX model directory (else $MEMLEDGER_EMBEDDER_PATH)',
  },
} as const satisfies OptionSpecs;

/** `--vector-weight W`: the vector lists' weight in the fusion (recall's `vectorWeight`). */
export const VECTOR_WEIGHT_OPTION = {
  'vector-weight': {
    kind: 'number',
    value: 'W',
    min: 0,
    help: 'the weight of the vector rankings in the fusion (default 1; 0 leaves them out)',
  },
} as const satisfies OptionSpecs;

/**
 * The embedder the flags or the environment name, or none (recall is then lexical only):
 * - an OpenAI-compatible server: `--embedder-url` (else MEMLEDGER_EMBEDDER_URL) with
 *   `--embedder-model` (else MEMLEDGER_EMBEDDER_MODEL); its API key only from
 *   MEMLEDGER_EMBEDDER_API_KEY, never a flag (flags show in process lists);
 * - a local model directory: `--embedder-path` (else MEMLEDGER_EMBEDDER_PATH), named by
 *   `--embedder-model` when given.
 * A flag wins over the environment; a server and a path at once is an error.
 */
export async function embedderFrom(
  ctx: CommandContext<typeof EMBEDDER_OPTIONS>,
): Promise<Embedder | undefined> {
  const pick = (flag: keyof typeof EMBEDDER_OPTIONS, envName: string): string | undefined => {
    const v = ctx.values[flag] ?? ctx.io.env[envName];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const url = pick('embedder-url', 'MEMLEDGER_EMBEDDER_URL');
  const path = pick('embedder-path', 'MEMLEDGER_EMBEDDER_PATH');
  const model = pick('embedder-model', 'MEMLEDGER_EMBEDDER_MODEL');
  if (url !== undefined && path !== undefined) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      'an embedder is a server (--embedder-url) or a local model (--embedder-path), not both',
    );
  }
  if (url !== undefined) {
    if (model === undefined) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        '--embedder-url needs --embedder-model (or MEMLEDGER_EMBEDDER_MODEL)',
      );
    }
    const apiKey = ctx.io.env.MEMLEDGER_EMBEDDER_API_KEY;
    const { openAiEmbedder } = await import('../src/index.js');
    return openAiEmbedder({
      baseUrl: url,
      model,
      ...(apiKey === undefined || apiKey === '' ? {} : { apiKey }),
    });
  }
  if (path !== undefined) {
    const { localEmbedder } = await import('../src/index.js');
    return localEmbedder({ modelPath: path, ...(model === undefined ? {} : { model }) });
  }
  if (model !== undefined && ctx.values['embedder-model'] !== undefined) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      '--embedder-model names the model of --embedder-url or --embedder-path; give one of them',
    );
  }
  return undefined;
}
