import { existsSync } from 'node:fs';

/** The Chromium the browser tests drive (Debian's package), or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Headless, and quiet: no background requests of its own that a test counting requests would see. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Whether to skip `what` for want of Chromium, saying so plainly; never in CI, where a missing browser fails the test. */
export function skipBrowser(what: string): boolean {
  if (existsSync(CHROMIUM) || process.env.CI === 'true') return false;
  console.warn(`\n*** ${what}: SKIPPED — no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH). ***\n`);
  return true;
}
