/** One versioned schema change. Versions are applied in ascending order, each exactly once. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function pendingMigrations(all: readonly Migration[], applied: ReadonlySet<number>): Migration[] {
  return [...all].sort((a, b) => a.version - b.version).filter((migration) => !applied.has(migration.version));
}
