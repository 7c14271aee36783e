import type { LlmClient } from '../src/index.js';
import { EngineError } from '../src/domain/errors.js';
import { createLlmClient } from '../src/faces.js';
import type { CommandContext } from './context.js';
import type { LLM_OPTIONS } from './llm-options.js';
import type { OptionSpecs } from './options.js';

/** `--rehearse` of `reflect` and `summarize`: the scripted fake model, nothing stored. */
export const REHEARSE_OPTION = {
  rehearse: {
    kind: 'flag',
    help: 'try it without a model: the scripted fake (eval/fake-llm) answers, the gate and the check judge, and nothing is stored',
  },
} as const satisfies OptionSpecs;

/** The model name a rehearsal's fake answers as (shown in the run). */
export const REHEARSAL_MODEL = 'memledger-scripted-fake';

/** The line a rehearsal's text output starts with. */
export const REHEARSAL_BANNER = `REHEARSAL: the scripted fake model (${REHEARSAL_MODEL}, eval/fake-llm), not a model of yours, answered; what follows is what memledger would have done with its answer, and nothing was stored`;

const LLM_FLAGS = ['llm-url', 'llm-model', 'llm-provider', 'llm-timeout'] as const;

/**
 * Runs `fn` with the scripted fake model: a real HTTP server on 127.0.0.1 speaking the OpenAI
 * protocol (as `bench confabulation` runs it), closed when `fn` ends. The environment's
 * MEMLEDGER_LLM_* are not read; an --llm-* flag with --rehearse is INVALID_ARGUMENT (a rehearsal
 * never calls a model of yours).
 */
export async function withRehearsalModel<T>(
  ctx: CommandContext<typeof LLM_OPTIONS>,
  fn: (llm: LlmClient) => Promise<T>,
): Promise<T> {
  const given = LLM_FLAGS.filter((f) => ctx.values[f] !== undefined);
  if (given.length > 0) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `--rehearse runs the scripted fake model, never a model of yours: drop ${given.map((f) => `--${f}`).join(', ')}, or drop --rehearse to call that model`,
      { data: { field: 'rehearse' } },
    );
  }
  const { startFakeLlm } = await import('../eval/fake-llm/fake-llm-server.js');
  const fake = await startFakeLlm({ protocol: 'openai' });
  try {
    return await fn(
      createLlmClient({
        provider: 'openai',
        baseUrl: fake.url,
        model: REHEARSAL_MODEL,
        retries: 0,
      }),
    );
  } finally {
    await fake.close();
  }
}
