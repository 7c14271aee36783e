/** Everything a command touches outside the engine, so tests can run the CLI in-process. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Readonly<Record<string, string | undefined>>;
  readFile(path: string): Promise<string>;
}
