import type { Command } from './command.js';
import { GLOBAL_OPTIONS, type OptionSpec, type OptionSpecs } from './options.js';
import { optionSynopsis } from './parse-options.js';

const WIDTH = 100;
const CONTINUATION = '       ';

const isRequired = (spec: OptionSpec): boolean => 'required' in spec && spec.required === true;

/** One option as the synopsis shows it: `--session S`, `[--limit N]`, `[--root DIR ...]`. */
function optionWord(name: string, spec: OptionSpec): string {
  const word = optionSynopsis(name, spec) + (spec.kind === 'repeat' ? ' ...' : '');
  return isRequired(spec) ? word : `[${word}]`;
}

/** Words joined into lines of at most WIDTH columns, continuation lines indented. */
function wrap(words: readonly string[], indent: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line !== '' && line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = `${indent}${CONTINUATION}${word}`;
    } else {
      line = line === '' ? `${indent}${word}` : `${line} ${word}`;
    }
  }
  lines.push(line);
  return lines.join('\n');
}

/** `memledger <path> <positionals> <options>`, generated from the command's declarations. */
export function synopsis(command: Command, indent = ''): string {
  return wrap(
    [
      'memledger',
      ...command.path,
      ...(command.positionals ?? []),
      ...Object.entries(command.options).map(([name, spec]) => optionWord(name, spec)),
    ],
    indent,
  );
}

function optionTable(options: OptionSpecs): string[] {
  const rows = Object.entries(options).map(([name, spec]) => [
    optionSynopsis(name, spec),
    spec.help,
  ]);
  const width = Math.min(32, Math.max(...rows.map(([left]) => (left as string).length)));
  return rows.map(([left, help]) => `  ${(left as string).padEnd(width)}  ${help as string}`);
}

/** `memledger <command> --help`: the synopsis, the summary, each option, and the notes. */
export function commandHelp(command: Command): string {
  return [
    `Usage: ${synopsis(command)}`,
    '',
    command.summary,
    ...(Object.keys(command.options).length === 0 ? [] : ['', ...optionTable(command.options)]),
    ...(command.notes === undefined ? [] : ['', ...command.notes]),
    '',
    ...optionTable(GLOBAL_OPTIONS),
  ].join('\n');
}

const FOOTER = `embedder: --embedder-url URL --embedder-model M (an OpenAI-compatible /v1/embeddings server; its
key from $MEMLEDGER_EMBEDDER_API_KEY) or --embedder-path DIR (a local ONNX model directory); else
$MEMLEDGER_EMBEDDER_URL, $MEMLEDGER_EMBEDDER_MODEL, $MEMLEDGER_EMBEDDER_PATH. With an embedder,
recall also ranks by the vectors \`embed\` stored; --lexical ranks by words only.
model (reflect, summarize, serve, bench confabulation): --llm-url URL --llm-model M, else
$MEMLEDGER_LLM_URL and $MEMLEDGER_LLM_MODEL (its key only in $MEMLEDGER_LLM_API_KEY). reflect and
summarize --rehearse try it without one: the scripted fake model answers and nothing is stored.
--db defaults to $MEMLEDGER_DB, then ./.memledger (embedded: every process shares it through a
background host, which stops after $MEMLEDGER_HOST_IDLE_SECONDS idle, default 300). With --json,
stdout is one JSON document; errors are {"error":{"code","message"}} on stderr with a non-zero
exit. A probe exits 3 when falsified and 4 when it could not look (verdict error); calibrate
exits 3 on a FAIL; propose exits 5 when the gate dropped every proposal.
\`memledger <command> --help\` describes each option.`;

/** `memledger --help`: every command's synopsis, generated from its declarations. */
export function usageText(commands: readonly Command[]): string {
  return [
    'memledger: a memory engine for long-running LLM agents that keeps its receipts',
    '',
    'Usage: memledger <command> [--db DIR|memory://|postgres://…] [--json]',
    '',
    ...commands.map((c) => synopsis(c, '  ')),
    '',
    FOOTER,
  ].join('\n');
}
