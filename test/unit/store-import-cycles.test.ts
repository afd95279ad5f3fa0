import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const STORE = resolve(import.meta.dirname, '../../src/store');

/** Each file of src/store/ with the files of src/store/ it imports: type-only and dynamic imports too. */
function storeImports(): Map<string, string[]> {
  const files = readdirSync(STORE, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
  return new Map(
    files.map((file) => {
      const { importedFiles } = ts.preProcessFile(readFileSync(join(STORE, file), 'utf8'), true, true);
      const imported = importedFiles
        .map(({ fileName }) => fileName)
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => relative(STORE, resolve(dirname(join(STORE, file)), specifier.replace(/\.js$/, '.ts'))))
        .filter((path) => !path.startsWith('..'));
      return [file, imported];
    }),
  );
}

/** A path of imports that comes back to where it started, or null when the imports hold no circle. */
function findCycle(imports: Map<string, string[]>): string[] | null {
  const finished = new Set<string>();
  const path: string[] = [];
  const visit = (file: string): string[] | null => {
    const start = path.indexOf(file);
    if (start >= 0) return [...path.slice(start), file];
    if (finished.has(file)) return null;
    path.push(file);
    for (const next of imports.get(file) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    finished.add(file);
    return null;
  };
  for (const file of imports.keys()) {
    const cycle = visit(file);
    if (cycle) return cycle;
  }
  return null;
}

// import-x/no-cycle (eslint.config.js) skips type-only imports; this counts them, so no circle of types comes back.
describe('src/store imports', () => {
  const imports = storeImports();

  it('are read with type-only imports (store.ts imports only types)', () => {
    expect(imports.get('store.ts')).toContain('contracts/dialect.ts');
  });

  it('run one way: no circle', () => {
    expect(imports.size).toBeGreaterThan(50);
    expect(findCycle(imports)).toBeNull();
  });

  it('would show a circle', () => {
    const circle = new Map([
      ['store.ts', ['contracts/dialect.ts']],
      ['contracts/dialect.ts', ['migrator.ts']],
      ['migrator.ts', ['contracts/dialect.ts']],
    ]);
    expect(findCycle(circle)).toEqual(['contracts/dialect.ts', 'migrator.ts', 'contracts/dialect.ts']);
  });
});
