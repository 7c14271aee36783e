import { EngineError } from '../src/domain/errors.js';
import { splitCommand } from './args.js';
import type { Command } from './command.js';
import { arrivalCommand, arrivalDiffCommand } from './commands/arrival.js';
import { benchConfabulationCommand, benchLocomoCommand } from './commands/bench.js';
import { demoCommand } from './commands/demo.js';
import { decideCommand, droppedCommand, pileCommand, proposeCommand } from './commands/gate.js';
import {
  actionRecordCommand,
  commitmentAddCommand,
  commitmentDoneCommand,
  commitmentDropCommand,
  commitmentListCommand,
  timezoneCommand,
  toolListCommand,
  toolRegisterCommand,
} from './commands/ground-truth.js';
import { historyCommand } from './commands/history.js';
import { importHistoryCommand } from './commands/import-history.js';
import { hookSessionStartCommand, hookStopCommand } from './commands/hook.js';
import { initCommand } from './commands/init.js';
import { mcpCommand } from './commands/mcp.js';
import { chainVerifyCommand, memoryCommand } from './commands/memory.js';
import {
  probeCalibrateCommand,
  probeCalibrationsCommand,
  probeFileCommand,
  probeHttpCommand,
  probeLogCommand,
  probeSqlCommand,
} from './commands/probe.js';
import { embedCommand, recallCommand } from './commands/recall.js';
import { reindexCommand } from './commands/reindex.js';
import {
  retractCommand,
  retractDueCommand,
  retractListCommand,
  retractSettleCommand,
  retractSignCommand,
} from './commands/retract.js';
import { reviewCommand } from './commands/review.js';
import { rememberCommand } from './commands/remember.js';
import {
  forgetCommand,
  forgetDeclineCommand,
  forgetPolicyCommand,
  forgetRequestsCommand,
} from './commands/forget.js';
import { reflectCommand, reflectListCommand } from './commands/reflect.js';
import { serveCommand } from './commands/serve.js';
import { summarizeCommand, summarizeListCommand } from './commands/summarize.js';
import { sessionListCommand, sessionNewCommand } from './commands/session.js';
import { slotDeclareCommand, slotDelegateCommand, slotListCommand } from './commands/slot.js';
import { tokenCreateCommand, tokenListCommand, tokenRevokeCommand } from './commands/token.js';
import {
  backupCommand,
  exportCommand,
  importCommand,
  moveCommand,
  restoreCommand,
} from './commands/transfer.js';
import { turnAddCommand } from './commands/turn.js';
import { usageCommand } from './commands/usage.js';
import { makeContext } from './context.js';
import { CliError, renderError } from './errors.js';
import type { CliIo } from './io.js';
import { parseCommandLine } from './parse-options.js';
import { commandHelp, usageText } from './usage.js';

/** Every command, in the order `memledger --help` lists them. */
const COMMANDS: readonly Command[] = [
  initCommand,
  sessionNewCommand,
  sessionListCommand,
  turnAddCommand,
  historyCommand,
  usageCommand,
  proposeCommand,
  pileCommand,
  droppedCommand,
  reflectCommand,
  reflectListCommand,
  summarizeCommand,
  summarizeListCommand,
  decideCommand,
  rememberCommand,
  reviewCommand,
  memoryCommand,
  chainVerifyCommand,
  slotDeclareCommand,
  slotDelegateCommand,
  slotListCommand,
  retractCommand,
  retractListCommand,
  retractDueCommand,
  retractSettleCommand,
  retractSignCommand,
  forgetCommand,
  forgetRequestsCommand,
  forgetDeclineCommand,
  forgetPolicyCommand,
  probeFileCommand,
  probeSqlCommand,
  probeHttpCommand,
  probeCalibrateCommand,
  probeLogCommand,
  probeCalibrationsCommand,
  arrivalCommand,
  arrivalDiffCommand,
  hookSessionStartCommand,
  hookStopCommand,
  commitmentAddCommand,
  commitmentDoneCommand,
  commitmentDropCommand,
  commitmentListCommand,
  actionRecordCommand,
  toolRegisterCommand,
  toolListCommand,
  timezoneCommand,
  recallCommand,
  embedCommand,
  reindexCommand,
  exportCommand,
  importCommand,
  backupCommand,
  restoreCommand,
  moveCommand,
  importHistoryCommand,
  tokenCreateCommand,
  tokenListCommand,
  tokenRevokeCommand,
  serveCommand,
  mcpCommand,
  benchLocomoCommand,
  benchConfabulationCommand,
  demoCommand,
];

/** `memledger --help`. */
export const USAGE_TEXT = usageText(COMMANDS);

/** The longest command path the words start with (`arrival diff` before `arrival`). */
function findCommand(words: readonly string[]): Command | undefined {
  return [...COMMANDS]
    .sort((a, b) => b.path.length - a.path.length)
    .find((c) => c.path.every((w, i) => words[i] === w));
}

/** Runs one CLI invocation and returns its exit code; all output goes through `io`. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const words = splitCommand(argv, 2).command;
    if (words.length === 0) {
      if (argv.includes('--help') || argv.includes('-h')) {
        io.stdout(USAGE_TEXT + '\n');
        return 0;
      }
      throw new CliError('UNKNOWN_COMMAND', 'no command given; run `memledger --help`');
    }
    const command = findCommand(words);
    if (command === undefined) {
      throw new CliError(
        'UNKNOWN_COMMAND',
        `unknown command "${words.join(' ')}"; run \`memledger --help\``,
      );
    }
    const { rest } = splitCommand(argv, command.path.length);
    const most = command.positionals?.length ?? 0;
    const { values, globals, positionals } = parseCommandLine(rest, command.options, most > 0);
    if (positionals.length > most) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        `unexpected argument "${positionals.at(-1) ?? ''}"`,
      );
    }
    if (globals.help) {
      io.stdout(commandHelp(command) + '\n');
      return 0;
    }
    const ctx = makeContext(io, values, globals, positionals);
    await command.run(ctx);
    return ctx.exitCode;
  } catch (err) {
    const { text, exitCode } = renderError(err);
    io.stderr(text);
    return exitCode;
  }
}
