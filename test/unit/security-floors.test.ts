import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const installedVersion = (name: string): number[] =>
  (createRequire(import.meta.url)(`${name}/package.json`) as { version: string }).version.split('.').map(Number);

/** a ≥ b, comparing major, minor, patch. */
const atLeast = (a: number[], b: number[]) => {
  for (let index = 0; index < 3; index += 1) if (a[index]! !== b[index]!) return a[index]! > b[index]!;
  return true;
};

describe('installed versions carry the security fixes docs/operations.md lists', () => {
  it('fastify is at least 5.12.5 (Content-Type and proxy advisories of 2025–2026)', () => {
    expect(atLeast(installedVersion('fastify'), [5, 12, 5])).toBe(true);
  });

  it('@fastify/proxy-addr is at least 5.1.1 (IPv4-mapped trust ranges, CVE-2026-92395)', () => {
    expect(atLeast(installedVersion('@fastify/proxy-addr'), [5, 1, 1])).toBe(true);
  });
});
