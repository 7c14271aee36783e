// llmFrom: which model the CLI's reflect and summarize speak to, from flags and the environment
// (the commands themselves, against a fake model, are in test/heavy/cli-llm-options.test.ts).
import { describe, expect, it } from 'vitest';
import type { CommandContext } from '../cli/context.js';
import { llmFrom, type LLM_OPTIONS } from '../cli/llm-options.js';
import { EngineError } from '../src/index.js';

describe('llmFrom', () => {
  const ctx = (values: Record<string, string | number>, env: Record<string, string> = {}) =>
    ({ values, io: { env } }) as unknown as CommandContext<typeof LLM_OPTIONS>;
  const codeOf = (fn: () => unknown): string => {
    try {
      fn();
    } catch (err) {
      if (err instanceof EngineError) return err.code;
      throw err;
    }
    return 'OK';
  };

  it('names anthropic for an anthropic.com host, openai for any other', () => {
    const provider = (url: string) => llmFrom(ctx({ 'llm-url': url, 'llm-model': 'm' }))?.provider;
    expect(provider('https://api.anthropic.com')).toBe('anthropic');
    expect(provider('https://anthropic.com/v1')).toBe('anthropic');
    expect(provider('https://API.Anthropic.COM')).toBe('anthropic');
    expect(provider('https://api.openai.com/v1')).toBe('openai');
    expect(provider('https://notanthropic.com')).toBe('openai');
    expect(provider('https://anthropic.com.example.net')).toBe('openai');
    expect(provider('http://127.0.0.1:11434/v1')).toBe('openai');
  });

  it('a named provider wins over the host', () => {
    const client = llmFrom(
      ctx({ 'llm-url': 'https://api.anthropic.com', 'llm-model': 'm', 'llm-provider': 'openai' }),
    );
    expect(client?.provider).toBe('openai');
  });

  it('is undefined when nothing names a model, and trims what is named', () => {
    expect(llmFrom(ctx({}))).toBeUndefined();
    const client = llmFrom(
      ctx({}, { MEMLEDGER_LLM_URL: ' http://127.0.0.1:1/v1/ ', MEMLEDGER_LLM_MODEL: ' m ' }),
    );
    expect(client).toMatchObject({ provider: 'openai', model: 'm', url: 'http://127.0.0.1:1/v1' });
  });

  it('refuses what the CLI refuses', () => {
    expect(codeOf(() => llmFrom(ctx({ 'llm-model': 'm' })))).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => llmFrom(ctx({ 'llm-url': 'http://127.0.0.1:1' })))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(
      codeOf(() => llmFrom(ctx({ 'llm-url': 'http://x', 'llm-model': 'm', 'llm-provider': 'x' }))),
    ).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => llmFrom(ctx({ 'llm-url': 'http://x', 'llm-model': 'm' })))).toBe('OK');
  });
});
