import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/**
 * Debian's chromium, driven by playwright-core: Playwright's own browser builds are downloaded
 * from a host this project cannot reach, while the Debian package installs anywhere (.ci/run
 * installs it when it is missing).
 */
export const CHROMIUM_PATH = '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  // A missing browser fails the tests loudly: skipping would pass CI without testing anything.
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `The browser tests need Debian's chromium at ${CHROMIUM_PATH}, which is missing: install it with ` +
        '`apt-get update && apt-get install -y --no-install-recommends chromium` (.ci/run does so).',
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    // No sandbox: CI runs as root, where chromium's sandbox refuses to start. No background
    // networking: the machine reaches nothing outside, and nothing should be tried.
    args: ['--no-sandbox', '--disable-background-networking'],
  });
}
