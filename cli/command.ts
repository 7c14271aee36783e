import type { CommandContext } from './context.js';
import type { OptionSpecs } from './options.js';

/**
 * One CLI command: where it lives (`['commitment', 'add']`), what it does, its options declared
 * once as data, and its run function, whose `ctx.values` is typed from those options.
 */
export interface Command<O extends OptionSpecs = OptionSpecs> {
  readonly path: readonly string[];
  /** One line: what the command does. */
  readonly summary: string;
  readonly options: O;
  /** The positional arguments as the usage text names them (`<id>`); their count is the most taken. */
  readonly positionals?: readonly string[];
  /** Extra usage lines: option combinations the declarations cannot say. */
  readonly notes?: readonly string[];
  run(ctx: CommandContext<O>): Promise<void>;
}

/** Declares a command; `O` is inferred from the options literal, so a misspelled name fails. */
export function defineCommand<const O extends OptionSpecs>(command: Command<O>): Command<O> {
  return command;
}
