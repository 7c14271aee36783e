import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium, as `.ci/run` installs it. */
export const CHROMIUM = process.env.MEMLEDGER_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Whether browser tests can run here. Under CI a missing Chromium is a failure, not a skip:
 * `.ci/run` installs it, so its absence means the set-up broke.
 */
export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false') {
    throw new Error(`browser tests need Chromium at ${CHROMIUM} (apt-get install -y chromium)`);
  }
  process.stderr.write(
    `browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium)\n`,
  );
  return false;
}

/** Headless Chromium with the flags this machine needs. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
    ],
  });
}

/**
 * The folder the browser tests write their screenshots to (not committed): `MEMLEDGER_SCREENSHOTS`
 * or a fresh folder under the system temp directory. Printed once, so a reader can look.
 */
export function screenshotDir(name: string): string {
  const dir =
    process.env.MEMLEDGER_SCREENSHOTS ??
    join(tmpdir(), `memledger-screenshots-${name}-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  process.stdout.write(`screenshots of the ${name} views: ${dir}\n`);
  return dir;
}
