/** Runs a benchmark's `main`; a failure prints `<name>: <message>` on stderr and exits non-zero. */
export function runMain(name: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    console.error(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
}
