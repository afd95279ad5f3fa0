import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * Writes one benchmark's section of the results file (docs/benchmarks.md) between its own markers,
 * `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`, replacing what was there and keeping everything else.
 */
export function writeResultsSection(path: string, name: string, report: string): void {
  const begin = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmarks\n';
  const section = `${begin}\n${report}\n${end}`;
  const start = text.indexOf(begin);
  const stop = text.indexOf(end);
  writeFileSync(
    path,
    start === -1 || stop === -1 ? `${text.trimEnd()}\n\n${section}\n` : `${text.slice(0, start)}${section}${text.slice(stop + end.length)}`,
  );
}
