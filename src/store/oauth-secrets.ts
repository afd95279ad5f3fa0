/** A stored OAuth secret, or the reason there is none: the database has not been migrated. */
export function secretOrThrow(name: string, value: string | undefined): string {
  if (value === undefined) throw new Error(`OAuth secret "${name}" is missing: run the database migrations (contacts-read-api migrate)`);
  return value;
}
