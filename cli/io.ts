import type { Engine, EngineConfig, KdfCost } from '../src/index.js';

/** An engine a command runs on, and how it gives it back when it is done. */
export interface LeasedEngine {
  engine: Engine;
  release(): Promise<void>;
}

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
  /**
   * Test seam (cli/main.ts leaves it unset): where commands get their engine. Unset, each
   * command opens the store and closes it when done, as a process does.
   */
  openEngine?: (config: EngineConfig) => Promise<LeasedEngine>;
  /**
   * Test seam (cli/main.ts leaves it unset): the scrypt cost owner keys are made and opened at.
   * Unset is production; `test` makes keys that nothing outside tests opens (docs/ARCHITECTURE.md).
   */
  keyCost?: KdfCost;
}
