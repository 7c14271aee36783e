/** Everything a command touches outside the engine, so tests can run the CLI in-process. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Readonly<Record<string, string | undefined>>;
  readFile(path: string): Promise<string>;
  /** True when a person is at a terminal (stdin and stdout are TTYs). */
  isTTY: boolean;
  /** True when stderr is a TTY: progress lines go there only then. */
  stderrIsTTY: boolean;
  /** Asks a question at the terminal; `hidden` does not echo (passphrases). */
  prompt(question: string, options?: { hidden?: boolean }): Promise<string>;
  /** The user's home directory, for the default owner key location. */
  homeDir: string;
}
