import { EngineError } from '../src/index.js';
import { parseCommandArgs, splitCommand } from './args.js';
import {
  ARRIVAL_DIFF_OPTIONS,
  ARRIVAL_OPTIONS,
  arrivalCommand,
  arrivalDiffCommand,
} from './commands/arrival.js';
import { BENCH_LOCOMO_OPTIONS, benchLocomoCommand } from './commands/bench.js';
import { DEMO_OPTIONS, demoCommand } from './commands/demo.js';
import { EMBED_OPTIONS, embedCommand, RECALL_OPTIONS, recallCommand } from './commands/recall.js';
import {
  ACTION_RECORD_OPTIONS,
  actionRecordCommand,
  COMMITMENT_ADD_OPTIONS,
  COMMITMENT_CLOSE_OPTIONS,
  COMMITMENT_LIST_OPTIONS,
  commitmentAddCommand,
  commitmentDoneCommand,
  commitmentDropCommand,
  commitmentListCommand,
  TIMEZONE_OPTIONS,
  timezoneCommand,
  TOOL_LIST_OPTIONS,
  TOOL_REGISTER_OPTIONS,
  toolListCommand,
  toolRegisterCommand,
} from './commands/ground-truth.js';
import {
  DECIDE_OPTIONS,
  decideCommand,
  DROPPED_OPTIONS,
  droppedCommand,
  PILE_OPTIONS,
  pileCommand,
  PROPOSE_OPTIONS,
  proposeCommand,
} from './commands/gate.js';
import {
  CHAIN_VERIFY_OPTIONS,
  chainVerifyCommand,
  MEMORY_OPTIONS,
  memoryCommand,
} from './commands/memory.js';
import {
  RETRACT_DUE_OPTIONS,
  RETRACT_LIST_OPTIONS,
  RETRACT_OPTIONS,
  RETRACT_SETTLE_OPTIONS,
  retractCommand,
  retractDueCommand,
  retractListCommand,
  retractSettleCommand,
} from './commands/retract.js';
import {
  PROBE_CALIBRATE_OPTIONS,
  PROBE_CALIBRATIONS_OPTIONS,
  PROBE_FILE_OPTIONS,
  PROBE_HTTP_OPTIONS,
  PROBE_LOG_OPTIONS,
  PROBE_SQL_OPTIONS,
  probeCalibrateCommand,
  probeCalibrationsCommand,
  probeFileCommand,
  probeHttpCommand,
  probeLogCommand,
  probeSqlCommand,
} from './commands/probe.js';
import { REVIEW_OPTIONS, reviewCommand } from './commands/review.js';
import {
  SLOT_DECLARE_OPTIONS,
  SLOT_LIST_OPTIONS,
  slotDeclareCommand,
  slotListCommand,
} from './commands/slot.js';
import { HISTORY_OPTIONS, historyCommand } from './commands/history.js';
import { INIT_OPTIONS, initCommand } from './commands/init.js';
import {
  SESSION_LIST_OPTIONS,
  SESSION_NEW_OPTIONS,
  sessionListCommand,
  sessionNewCommand,
} from './commands/session.js';
import { TURN_ADD_OPTIONS, turnAddCommand } from './commands/turn.js';
import { USAGE_OPTIONS, usageCommand } from './commands/usage.js';
import { makeContext, type CommandContext } from './context.js';
import { renderError } from './errors.js';
import type { CliIo } from './io.js';

interface Command {
  words: string[];
  options: Parameters<typeof parseCommandArgs>[1];
  run(ctx: CommandContext): Promise<void>;
  summary: string;
  /** How many positional arguments the command takes (default none). */
  positionals?: number;
}

const COMMANDS: Command[] = [
  {
    words: ['init'],
    options: INIT_OPTIONS,
    run: initCommand,
    summary: 'init [--subject S] [--key F] [--passphrase-file P]',
  },
  {
    words: ['session', 'new'],
    options: SESSION_NEW_OPTIONS,
    run: sessionNewCommand,
    summary: 'session new [--subject S] [--id ID] [--title T]',
  },
  {
    words: ['session', 'list'],
    options: SESSION_LIST_OPTIONS,
    run: sessionListCommand,
    summary: 'session list [--subject S] [--limit N]',
  },
  {
    words: ['turn', 'add'],
    options: TURN_ADD_OPTIONS,
    run: turnAddCommand,
    summary:
      'turn add --session S --role user|assistant|system|tool --text T [--tools a,b] [--sources u1,u2] [--no-tools] [--utility] [--corrective] [--speaker NAME]\n       turn add --session S --blocks-file response.json',
  },
  {
    words: ['history'],
    options: HISTORY_OPTIONS,
    run: historyCommand,
    summary:
      'history --session S [--format text|json|messages] [--last N] [--budget CHARS] [--max-turn-chars N]',
  },
  { words: ['usage'], options: USAGE_OPTIONS, run: usageCommand, summary: 'usage --session S' },
  {
    words: ['propose'],
    options: PROPOSE_OPTIONS,
    run: proposeCommand,
    summary: 'propose --session S --file proposals.json [--by reflection]',
  },
  { words: ['pile'], options: PILE_OPTIONS, run: pileCommand, summary: 'pile [--subject S]' },
  {
    words: ['dropped'],
    options: DROPPED_OPTIONS,
    run: droppedCommand,
    summary: 'dropped [--subject S] [--limit N]',
  },
  {
    words: ['decide'],
    options: DECIDE_OPTIONS,
    run: decideCommand,
    positionals: 2,
    summary: 'decide <proposalId> approve|reject [--key F] [--passphrase-file P] [--note N]',
  },
  {
    words: ['review'],
    options: REVIEW_OPTIONS,
    run: reviewCommand,
    summary: 'review [--subject S] [--key F] [--passphrase-file P]   (at a terminal)',
  },
  {
    words: ['memory'],
    options: MEMORY_OPTIONS,
    run: memoryCommand,
    summary: 'memory [--subject S] [--all]',
  },
  {
    words: ['chain', 'verify'],
    options: CHAIN_VERIFY_OPTIONS,
    run: chainVerifyCommand,
    summary: 'chain verify [--subject S]',
  },
  {
    words: ['slot', 'declare'],
    options: SLOT_DECLARE_OPTIONS,
    run: slotDeclareCommand,
    summary: 'slot declare --name N --rule user_fact|correction|action [--auto-live] [--subject S]',
  },
  {
    words: ['slot', 'list'],
    options: SLOT_LIST_OPTIONS,
    run: slotListCommand,
    summary: 'slot list [--subject S]',
  },
  {
    words: ['retract', 'list'],
    options: RETRACT_LIST_OPTIONS,
    run: retractListCommand,
    summary: 'retract list [--subject S] [--verdict unchecked|stands|overturned|unresolvable]',
  },
  {
    words: ['retract', 'due'],
    options: RETRACT_DUE_OPTIONS,
    run: retractDueCommand,
    summary: 'retract due [--subject S]',
  },
  {
    words: ['retract', 'settle'],
    options: RETRACT_SETTLE_OPTIONS,
    run: retractSettleCommand,
    positionals: 1,
    summary:
      'retract settle <id> (--run-probe | --verdict stands|overturned|unresolvable --outcome TEXT) [--by WHO]',
  },
  {
    words: ['retract'],
    options: RETRACT_OPTIONS,
    run: retractCommand,
    summary:
      'retract --claim C --stood-on S --why-wrong W --corrected C2 --procedure P --pass-obs O1 --overturn-if O2\n' +
      '       [--fact ID] [--probe-file spec.json] [--caught-by self|owner|together|reality] [--corrected-at ISO]\n' +
      '       [--due-days N] [--claimed-at ISO] [--surface S] [--ref R] [--tags a,b] [--subject S]',
  },
  {
    words: ['probe', 'file'],
    options: PROBE_FILE_OPTIONS,
    run: probeFileCommand,
    summary:
      'probe file --path P (--exists | --missing | --contains X [--negate]) [--root DIR ...] [--subject S] [--purpose T]',
  },
  {
    words: ['probe', 'sql'],
    options: PROBE_SQL_OPTIONS,
    run: probeSqlCommand,
    summary: 'probe sql --query Q --op eq|ne|lt|le|gt|ge --expect V   (negative: --expect=-1)',
  },
  {
    words: ['probe', 'http'],
    options: PROBE_HTTP_OPTIONS,
    run: probeHttpCommand,
    summary: 'probe http --url U [--status N] [--contains X] [--allow host,...] [--timeout-ms N]',
  },
  {
    words: ['probe', 'calibrate'],
    options: PROBE_CALIBRATE_OPTIONS,
    run: probeCalibrateCommand,
    summary: 'probe calibrate [--instrument NAME] [--root DIR ...]',
  },
  {
    words: ['probe', 'log'],
    options: PROBE_LOG_OPTIONS,
    run: probeLogCommand,
    summary: 'probe log [--limit N] [--kind file|sql|http]',
  },
  {
    words: ['probe', 'calibrations'],
    options: PROBE_CALIBRATIONS_OPTIONS,
    run: probeCalibrationsCommand,
    summary: 'probe calibrations [--instrument NAME] [--limit N]',
  },
  {
    words: ['arrival', 'diff'],
    options: ARRIVAL_DIFF_OPTIONS,
    run: arrivalDiffCommand,
    summary: 'arrival diff (--surface S [--subject S] | --id MANIFEST)',
  },
  {
    words: ['arrival'],
    options: ARRIVAL_OPTIONS,
    run: arrivalCommand,
    summary:
      'arrival --surface chat|wake (--session S | --subject S) [--format text|json|anthropic]',
  },
  {
    words: ['commitment', 'add'],
    options: COMMITMENT_ADD_OPTIONS,
    run: commitmentAddCommand,
    summary: 'commitment add --title T [--due YYYY-MM-DD] [--subject S]',
  },
  {
    words: ['commitment', 'done'],
    options: COMMITMENT_CLOSE_OPTIONS,
    run: commitmentDoneCommand,
    positionals: 1,
    summary: 'commitment done <id>',
  },
  {
    words: ['commitment', 'drop'],
    options: COMMITMENT_CLOSE_OPTIONS,
    run: commitmentDropCommand,
    positionals: 1,
    summary: 'commitment drop <id>',
  },
  {
    words: ['commitment', 'list'],
    options: COMMITMENT_LIST_OPTIONS,
    run: commitmentListCommand,
    summary: 'commitment list [--status open|done|dropped] [--subject S] [--limit N]',
  },
  {
    words: ['action', 'record'],
    options: ACTION_RECORD_OPTIONS,
    run: actionRecordCommand,
    summary:
      'action record --tool T --surface S --target TEXT [--status pending|confirmed|failed] [--completed-at ISO] [--subject S]',
  },
  {
    words: ['tool', 'register'],
    options: TOOL_REGISTER_OPTIONS,
    run: toolRegisterCommand,
    summary: 'tool register --name N --surfaces chat,wake [--description D] [--subject S]',
  },
  {
    words: ['tool', 'list'],
    options: TOOL_LIST_OPTIONS,
    run: toolListCommand,
    summary: 'tool list [--surface S] [--subject S]',
  },
  {
    words: ['timezone'],
    options: TIMEZONE_OPTIONS,
    run: timezoneCommand,
    summary: 'timezone [--zone Europe/Stockholm|default] [--subject S]',
  },
  {
    words: ['recall'],
    options: RECALL_OPTIONS,
    run: recallCommand,
    positionals: 1,
    summary:
      'recall "query" [--k 10] [--session S] [--include-history] [--kinds turn,fact] [--subject S] [--lexical] [--vector-weight 1] [embedder]',
  },
  {
    words: ['embed'],
    options: EMBED_OPTIONS,
    run: embedCommand,
    summary: 'embed [--subject S] [--limit 1000] embedder',
  },
  {
    words: ['bench', 'locomo'],
    options: BENCH_LOCOMO_OPTIONS,
    run: benchLocomoCommand,
    summary:
      'bench locomo --data ../shared/bench/locomo-dev.json [--engines pglite,postgres] [--vector-weight 1] [embedder]',
  },
  { words: ['demo'], options: DEMO_OPTIONS, run: demoCommand, summary: 'demo' },
];

export const USAGE_TEXT = `memledger: a memory engine for long-running LLM agents that keeps its receipts

Usage: memledger <command> [--db DIR|memory://|postgres://…] [--json]

${COMMANDS.map((c) => `  memledger ${c.summary}`).join('\n')}

embedder: --embedder-url URL --embedder-model M (an OpenAI-compatible /v1/embeddings server; its
key from $MEMLEDGER_EMBEDDER_API_KEY) or --embedder-path DIR (a local ONNX model directory); else
$MEMLEDGER_EMBEDDER_URL, $MEMLEDGER_EMBEDDER_MODEL, $MEMLEDGER_EMBEDDER_PATH. With an embedder,
recall also ranks by the vectors \`embed\` stored; --lexical ranks by words only.
--db defaults to $MEMLEDGER_DB, then ./.memledger (embedded). With --json, stdout is one JSON
document; errors are {"error":{"code","message"}} on stderr with a non-zero exit. A probe
exits 3 when falsified and 4 when it could not look (verdict error); calibrate exits 3 on a FAIL.`;

/** Runs one CLI invocation and returns its exit code; all output goes through `io`. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const words = splitCommand(argv, 2).command;
    if (words.length === 0) {
      if (argv.includes('--help') || argv.includes('-h')) {
        io.stdout(USAGE_TEXT + '\n');
        return 0;
      }
      throw new EngineError('UNKNOWN_COMMAND', 'no command given; run `memledger --help`');
    }
    const command = COMMANDS.find((c) => c.words.every((w, i) => words[i] === w));
    if (command === undefined) {
      throw new EngineError(
        'UNKNOWN_COMMAND',
        `unknown command "${words.join(' ')}"; run \`memledger --help\``,
      );
    }
    const { rest } = splitCommand(argv, command.words.length);
    const { values, positionals } = parseCommandArgs(rest, command.options, true);
    if (positionals.length > (command.positionals ?? 0)) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        `unexpected argument "${positionals.at(-1) ?? ''}"`,
      );
    }
    if (values.help === true) {
      io.stdout(`Usage: memledger ${command.summary}\n`);
      return 0;
    }
    const ctx = makeContext(io, values, positionals);
    await command.run(ctx);
    return ctx.exitCode;
  } catch (err) {
    const { text, exitCode } = renderError(err);
    io.stderr(text);
    return exitCode;
  }
}
