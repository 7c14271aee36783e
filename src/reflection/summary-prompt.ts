import { createHash } from 'node:crypto';
import { renderCitations } from '../domain/fact-render.js';
import type { SlotDeclaration } from '../domain/fact.js';
import {
  MAX_SENTENCE_CITATIONS,
  MAX_SUMMARY_CHARS,
  MAX_SUMMARY_SENTENCES,
  type PreviousSentence,
} from '../domain/summary-check.js';
import { MAX_SHOWN_CHARS, MAX_SHOWN_TURN_CHARS } from './reflection-prompt.js';

/** The instructions of a summary request (part of the prompt version). */
export const SUMMARY_SYSTEM = `You write one aspect of a living summary in a long-running assistant's memory. The memory engine (memledger) shows you the numbered turns of one conversation session, the aspect to summarize, and the previous version of that summary. memledger checks every sentence you write against the turns it cites and leaves out whatever they do not say; the owner reviews the rest before anything is believed.

Rules:
- Each sentence says one thing the user said in this session or that the previous version said, in the third person ("The user started a new job in March.").
- Each sentence cites, in "turns", the numbers of the user turns that say it. Only the user's own words support a sentence: never cite an assistant turn, and never cite a turn only for context.
- To keep a sentence of the previous version that still holds, copy it exactly and cite no turn ("turns": []). Leave out what the user has since said is no longer true.
- Do not write what you infer or guess: how the user feels, why they did something, what they will do, unless they said it.
- A "no record" answer is correct when no record exists; it counts as a failure only if a record existed. Never summarize it as a failure to recall.
- Writing no sentence is a valid answer when the session says nothing about the aspect.

Answer with {"sentences": [{"text": "...", "turns": [N, ...]}, ...]}.`;

/** The frame of the user message around the sections (part of the version). */
const USER_FRAME = `Session {session}. Summarize the aspect below from these turns and answer with {"sentences": [...]}.`;

/** The forced tool's (or schema's) description. */
export const SUMMARY_TOOL_DESCRIPTION =
  'Write the summary of one aspect: sentences, each with the numbers of the user turns that say it.';

/** The answer's shape: sentences, each a text and the turns it cites. */
export function summarySchema(): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['sentences'],
    properties: {
      sentences: {
        type: 'array',
        maxItems: MAX_SUMMARY_SENTENCES,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['text', 'turns'],
          properties: {
            text: { type: 'string' },
            turns: {
              type: 'array',
              maxItems: MAX_SENTENCE_CITATIONS,
              items: { type: 'integer' },
            },
          },
        },
      },
    },
  };
}

/** What an aspect is about, as the model reads it (the aspect's name in words, and its scope). */
function aspectLine(aspect: SlotDeclaration): string {
  const scope = aspect.scope ?? 'rolling';
  return JSON.stringify({
    aspect: aspect.name,
    description: `${aspect.name.replace(/_/g, ' ')}: ${
      scope === 'rolling'
        ? 'a rolling summary, folded forward session by session'
        : 'a summary of this session only'
    }`,
  });
}

/**
 * The user message: the turns (the lines `turnsToShow` chose), the aspect and the previous
 * version, each line one JSON object, so no stored text can end a section.
 */
export function summaryUserText(input: {
  sessionId: string;
  turnLines: readonly string[];
  aspect: SlotDeclaration;
  previous: readonly PreviousSentence[];
}): string {
  return [
    USER_FRAME.replace('{session}', JSON.stringify(input.sessionId)),
    '<turns>',
    ...input.turnLines,
    '</turns>',
    '<aspect>',
    aspectLine(input.aspect),
    '</aspect>',
    '<previous_summary>',
    ...input.previous.map((p) =>
      JSON.stringify({ text: p.text, cited: renderCitations(p.citations, 'UTC') }),
    ),
    '</previous_summary>',
  ].join('\n');
}

/** What the version hashes: instructions, frame, tool description, schema, limits, samples. */
export const SUMMARY_TEMPLATE = [
  SUMMARY_SYSTEM,
  USER_FRAME,
  SUMMARY_TOOL_DESCRIPTION,
  JSON.stringify(summarySchema()),
  JSON.stringify({ MAX_SHOWN_CHARS, MAX_SHOWN_TURN_CHARS, MAX_SUMMARY_CHARS }),
  aspectLine({ name: 'sample_aspect', rule: 'summary', autoLive: false, scope: 'rolling' }),
  aspectLine({ name: 'sample_aspect', rule: 'summary', autoLive: false, scope: 'session' }),
].join('\n\u0000\n');

/** The prompt version every summary is recorded under: a hash of the template. */
export const SUMMARY_PROMPT_VERSION = `summary-${createHash('sha256')
  .update(SUMMARY_TEMPLATE)
  .digest('hex')
  .slice(0, 12)}`;
