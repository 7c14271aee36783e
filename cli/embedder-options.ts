import { localEmbedder, openAiEmbedder, EngineError, type Embedder } from '../src/index.js';
import { stringValue } from './args.js';
import type { CommandContext } from './context.js';

/** Options of the commands that embed (`embed`, `recall`). */
export const EMBEDDER_OPTIONS = {
  'embedder-url': { type: 'string' },
  'embedder-model': { type: 'string' },
  'embedder-path': { type: 'string' },
} as const;

/** `--vector-weight W`: the vector lists' weight in the fusion (recall's `vectorWeight`). */
export function vectorWeightFrom(ctx: CommandContext): number | undefined {
  const v = stringValue(ctx.values, 'vector-weight');
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `--vector-weight must be a number of at least 0, not "${v}"`,
    );
  }
  return n;
}

/**
 * The embedder the flags or the environment name, or none (recall is then lexical only):
 * - an OpenAI-compatible server: `--embedder-url` (else MEMLEDGER_EMBEDDER_URL) with
 *   `--embedder-model` (else MEMLEDGER_EMBEDDER_MODEL); its API key only from
 *   MEMLEDGER_EMBEDDER_API_KEY, never a flag (flags show in process lists);
 * - a local model directory: `--embedder-path` (else MEMLEDGER_EMBEDDER_PATH), named by
 *   `--embedder-model` when given.
 * A flag wins over the environment; a server and a path at once is an error.
 */
export async function embedderFrom(ctx: CommandContext): Promise<Embedder | undefined> {
  const pick = (flagName: string, envName: string): string | undefined => {
    const v = stringValue(ctx.values, flagName) ?? ctx.io.env[envName];
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
    return openAiEmbedder({
      baseUrl: url,
      model,
      ...(apiKey === undefined || apiKey === '' ? {} : { apiKey }),
    });
  }
  if (path !== undefined) {
    return localEmbedder({ modelPath: path, ...(model === undefined ? {} : { model }) });
  }
  if (model !== undefined && stringValue(ctx.values, 'embedder-model') !== undefined) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      '--embedder-model names the model of --embedder-url or --embedder-path; give one of them',
    );
  }
  return undefined;
}
