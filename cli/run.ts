import { EngineError } from '../src/index.js';
import { parseCommandArgs, splitCommand } from './args.js';
import { DEMO_OPTIONS, demoCommand } from './commands/demo.js';
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
      'turn add --session S --role user|assistant|system|tool --text T [--tools a,b] [--sources u1,u2] [--no-tools] [--utility] [--corrective]\n       turn add --session S --blocks-file response.json',
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
  { words: ['demo'], options: DEMO_OPTIONS, run: demoCommand, summary: 'demo' },
];

export const USAGE_TEXT = `memledger: a memory engine for long-running LLM agents that keeps its receipts

Usage: memledger <command> [--db DIR|memory://|postgres://…] [--json]

${COMMANDS.map((c) => `  memledger ${c.summary}`).join('\n')}

--db defaults to $MEMLEDGER_DB, then ./.memledger (embedded). With --json, stdout is one JSON
document; errors are {"error":{"code","message"}} on stderr with a non-zero exit.`;

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
