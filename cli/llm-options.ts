import type { LlmClient } from '../src/index.js';
import { EngineError } from '../src/domain/errors.js';
import { createLlmClient, LLM_PROVIDERS, parseProvider } from '../src/faces.js';
import type { CommandContext } from './context.js';
import type { OptionSpecs } from './options.js';

/** Options of the commands that call a model (`reflect`, `summarize`, `serve`, `bench confabulation`). */
export const LLM_OPTIONS = {
  'llm-url': {
    kind: 'text',
    value: 'URL',
    help: 'the model API base: OpenAI-compatible with /v1 (OpenAI, Ollama, vLLM, OpenRouter), or Anthropic (else $MEMLEDGER_LLM_URL)',
  },
  'llm-model': { kind: 'text', value: 'M', help: 'the model (else $MEMLEDGER_LLM_MODEL)' },
  'llm-provider': {
    kind: 'text',
    value: LLM_PROVIDERS.join('|'),
    help: 'the API the URL speaks (else $MEMLEDGER_LLM_PROVIDER; default openai, or anthropic for an anthropic.com URL); the key only in $MEMLEDGER_LLM_API_KEY',
  },
  'llm-timeout': {
    kind: 'int',
    value: 'S',
    min: 1,
    help: 'seconds per attempt before a call is abandoned (default 120; 429 and 5xx are retried twice)',
  },
} as const satisfies OptionSpecs;

/** The longest per-attempt timeout, in seconds (a timer holds at most 2^31 - 1 ms). */
const MAX_TIMEOUT_S = 2_147_483;

/**
 * The model the flags or the environment name, or undefined when neither names a URL. A flag
 * wins over the environment; the API key comes only from MEMLEDGER_LLM_API_KEY (flags show in
 * process lists). A model without a URL, or a URL without a model, is INVALID_ARGUMENT.
 */
export function llmFrom(ctx: CommandContext<typeof LLM_OPTIONS>): LlmClient | undefined {
  const pick = (flag: 'llm-url' | 'llm-model' | 'llm-provider', envName: string) => {
    const v = ctx.values[flag] ?? ctx.io.env[envName];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const url = pick('llm-url', 'MEMLEDGER_LLM_URL');
  const model = pick('llm-model', 'MEMLEDGER_LLM_MODEL');
  const named = pick('llm-provider', 'MEMLEDGER_LLM_PROVIDER');
  if (url === undefined) {
    if (model !== undefined || named !== undefined || ctx.values['llm-timeout'] !== undefined) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        'a model is reached by its URL: give --llm-url (or MEMLEDGER_LLM_URL) with --llm-model',
        { data: { field: 'llmUrl' } },
      );
    }
    return undefined;
  }
  if (model === undefined) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      '--llm-url needs --llm-model (or MEMLEDGER_LLM_MODEL)',
      { data: { field: 'llmModel' } },
    );
  }
  const provider =
    named !== undefined
      ? parseProvider(named)
      : /(^|\.)anthropic\.com$/i.test(hostOf(url))
        ? 'anthropic'
        : 'openai';
  const apiKey = ctx.io.env.MEMLEDGER_LLM_API_KEY;
  const timeout = ctx.values['llm-timeout'];
  if (timeout !== undefined && timeout > MAX_TIMEOUT_S) {
    throw new EngineError('INVALID_ARGUMENT', `--llm-timeout is at most ${MAX_TIMEOUT_S} seconds`, {
      data: { field: 'llmTimeout' },
    });
  }
  return createLlmClient({
    provider,
    baseUrl: url,
    model,
    ...(apiKey === undefined || apiKey === '' ? {} : { apiKey }),
    ...(timeout === undefined ? {} : { timeoutMs: timeout * 1000 }),
  });
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
