/**
 * Whether the tests of a program someone else wrote (a browser, a DAV client) run here: yes when it is installed.
 * Without it they are skipped with a plain message, except in CI (CI=true), where they run and fail: CI installs it
 * (.ci/run).
 */
export function externalToolPresent(what: string, installed: () => boolean, install: string): boolean {
  if (installed() || process.env.CI === 'true') return true;
  console.warn(`\n*** ${what}: SKIPPED — not installed (${install}). ***\n`);
  return false;
}
