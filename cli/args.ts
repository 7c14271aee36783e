/** Splits argv into the command words (leading positionals) and the rest. */
export function splitCommand(
  argv: readonly string[],
  words: number,
): { command: string[]; rest: string[] } {
  const command: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (command.length < words && !arg.startsWith('-')) {
      command.push(arg);
      continue;
    }
    rest.push(arg);
    // a global option's value is not a command word
    if (arg === '--db' && i + 1 < argv.length) rest.push(argv[++i] as string);
  }
  return { command, rest };
}
