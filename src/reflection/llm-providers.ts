import { EngineError } from '../domain/errors.js';
import {
  answeredModel,
  answerObject,
  cleanProviderText,
  checkBaseUrl,
  llmFailed,
  LLM_PROVIDERS,
  postJson,
  tokenCount,
  type LlmClient,
  type LlmOptions,
  type LlmProvider,
  type StructuredAnswer,
  type StructuredRequest,
} from './llm-client.js';

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_RETRIES = 2;
const DEFAULT_MAX_TOKENS = 4096;
/** The Messages API version memledger is written against. */
export const ANTHROPIC_VERSION = '2023-06-01';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : null;

/** OpenAI's `{"error":{"message"}}`, Anthropic's `{"type":"error","error":{"message"}}`, or text. */
function providerMessage(body: unknown, text: string): string {
  const error = obj(obj(body)?.error);
  const message = error?.message;
  if (typeof message === 'string' && message !== '') {
    return typeof error?.type === 'string' ? `${error.type}: ${message}` : message;
  }
  const trimmed = text.trim();
  return trimmed === '' ? '(no message)' : trimmed.slice(0, 300);
}

/** How `postJson` treats a provider's calls: the timeout, the retries and their waits. */
function httpOptions(provider: LlmProvider, options: LlmOptions) {
  return {
    provider,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    retries: options.retries ?? DEFAULT_RETRIES,
    ...(options.retryDelayMs === undefined ? {} : { retryDelayMs: options.retryDelayMs }),
    ...(options.maxRetryDelayMs === undefined ? {} : { maxRetryDelayMs: options.maxRetryDelayMs }),
  };
}

/** Chat Completions with `response_format: json_schema` (OpenAI, Ollama, vLLM, OpenRouter). */
function openAiClient(options: LlmOptions, base: URL): LlmClient {
  const endpoint = new URL(
    base.pathname.endsWith('/chat/completions')
      ? base.href
      : `${base.href.replace(/\/+$/, '')}/chat/completions`,
  );
  const http = httpOptions('openai', options);
  return {
    provider: 'openai',
    model: options.model,
    url: base.href,
    async generate(request: StructuredRequest): Promise<StructuredAnswer> {
      const { body } = await postJson(
        http,
        endpoint,
        options.apiKey === undefined ? {} : { authorization: `Bearer ${options.apiKey}` },
        {
          model: options.model,
          messages: [
            { role: 'system', content: request.system },
            { role: 'user', content: request.user },
          ],
          response_format: {
            type: 'json_schema',
            json_schema: {
              name: request.name,
              description: request.description,
              schema: request.schema,
              strict: true,
            },
          },
          max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
          temperature: 0,
        },
        (b, t) => cleanProviderText(providerMessage(b, t), options.apiKey),
      );
      const choice = obj((obj(body)?.choices as unknown[] | undefined)?.[0]);
      const message = obj(choice?.message);
      if (choice === null || message === null) {
        throw llmFailed('openai', 'no_answer', 'the answer holds no choice with a message');
      }
      if (typeof message.refusal === 'string' && message.refusal !== '') {
        throw llmFailed('openai', 'refusal', `the model refused: ${message.refusal.slice(0, 300)}`);
      }
      if (choice.finish_reason === 'length') {
        throw llmFailed(
          'openai',
          'truncated',
          'the answer was cut at the token limit (finish_reason "length"); nothing was proposed',
        );
      }
      if (typeof message.content !== 'string' || message.content.trim() === '') {
        throw llmFailed('openai', 'no_answer', 'the message has no content');
      }
      const usage = obj(obj(body)?.usage);
      const model = obj(body)?.model;
      return {
        value: answerObject('openai', message.content),
        model: answeredModel(model, options.model),
        usage: {
          inputTokens: tokenCount(usage?.prompt_tokens),
          outputTokens: tokenCount(usage?.completion_tokens),
        },
      };
    },
  };
}

/** The Messages API with one tool the model is forced to call; its input is the answer. */
function anthropicClient(options: LlmOptions, base: URL): LlmClient {
  const path = base.pathname.replace(/\/+$/, '').replace(/\/v1(\/messages)?$/, '');
  const endpoint = new URL(`${base.origin}${path}/v1/messages`);
  const http = httpOptions('anthropic', options);
  return {
    provider: 'anthropic',
    model: options.model,
    url: base.href,
    async generate(request: StructuredRequest): Promise<StructuredAnswer> {
      const { body } = await postJson(
        http,
        endpoint,
        {
          'anthropic-version': ANTHROPIC_VERSION,
          ...(options.apiKey === undefined ? {} : { 'x-api-key': options.apiKey }),
        },
        {
          model: options.model,
          max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
          system: request.system,
          messages: [{ role: 'user', content: request.user }],
          tools: [
            { name: request.name, description: request.description, input_schema: request.schema },
          ],
          tool_choice: { type: 'tool', name: request.name },
          temperature: 0,
        },
        (b, t) => cleanProviderText(providerMessage(b, t), options.apiKey),
      );
      const answer = obj(body);
      if (answer?.stop_reason === 'refusal') {
        throw llmFailed('anthropic', 'refusal', 'the model refused (stop_reason "refusal")');
      }
      if (answer?.stop_reason === 'max_tokens') {
        throw llmFailed(
          'anthropic',
          'truncated',
          'the answer was cut at the token limit (stop_reason "max_tokens"); nothing was proposed',
        );
      }
      const content = Array.isArray(answer?.content) ? (answer.content as unknown[]) : [];
      const call = content
        .map(obj)
        .find((b) => b !== null && b.type === 'tool_use' && b.name === request.name);
      if (call === undefined || call === null) {
        throw llmFailed(
          'anthropic',
          'no_answer',
          `the model did not call the tool "${request.name}" (stop_reason "${String(answer?.stop_reason)}")`,
        );
      }
      const usage = obj(answer?.usage);
      const model = answer?.model;
      return {
        value: answerObject('anthropic', call.input),
        model: answeredModel(model, options.model),
        usage: {
          inputTokens: tokenCount(usage?.input_tokens),
          outputTokens: tokenCount(usage?.output_tokens),
        },
      };
    },
  };
}

/** A provider name from a string: INVALID_ARGUMENT unless it is one of `LLM_PROVIDERS`. */
export function parseProvider(value: string): LlmProvider {
  const found = LLM_PROVIDERS.find((p) => p === value.trim().toLowerCase());
  if (found === undefined) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `unknown LLM provider "${value.slice(0, 40)}": use ${LLM_PROVIDERS.join(' or ')}`,
      { data: { field: 'llmProvider' } },
    );
  }
  return found;
}

/**
 * A client for a model behind OpenAI's Chat Completions (structured output) or Anthropic's
 * Messages API (a forced tool), over plain fetch. Bad options are INVALID_ARGUMENT here, before
 * any call.
 */
export function createLlmClient(options: LlmOptions): LlmClient {
  const provider = parseProvider(String(options.provider));
  const base = checkBaseUrl(String(options.baseUrl));
  if (typeof options.model !== 'string' || options.model.trim() === '') {
    throw new EngineError('INVALID_ARGUMENT', 'an LLM model is required', {
      data: { field: 'llmModel' },
    });
  }
  for (const [field, v, min] of [
    ['timeoutMs', options.timeoutMs, 1],
    ['retries', options.retries, 0],
    ['retryDelayMs', options.retryDelayMs, 0],
    ['maxRetryDelayMs', options.maxRetryDelayMs, 0],
  ] as const) {
    if (v !== undefined && (!Number.isInteger(v) || v < min)) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        `${field} must be a whole number of at least ${min}`,
        {
          data: { field },
        },
      );
    }
  }
  const opts = { ...options, provider, model: options.model.trim() };
  return provider === 'openai' ? openAiClient(opts, base) : anthropicClient(opts, base);
}
