/**
 * Writes a progress line to stderr, only when stderr is a terminal: piped or captured runs
 * (`--json > out.json 2> log`) get the report alone.
 */
export function progress(line: string): void {
  if (process.stderr.isTTY) process.stderr.write(`${line}\n`);
}
