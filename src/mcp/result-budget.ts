/**
 * How much one tool result may carry. Agents cap what a tool may return (Claude Code: 25,000 tokens); JSON full of ids
 * and dates runs at about 3 bytes a token, and a result carries its JSON twice (structured and as text) plus a summary.
 */
export const RESULT_BUDGET_BYTES = 32 * 1024;

const sizeOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

/** The longest prefix of `items` whose JSON array fits `budget` bytes (possibly none). */
export function fittingPrefix<T>(items: readonly T[], budget: number): T[] {
  let used = 2;
  const kept: T[] = [];
  for (const item of items) {
    used += sizeOf(item) + (kept.length === 0 ? 0 : 1);
    if (used > budget) break;
    kept.push(item);
  }
  return kept;
}

/**
 * The object with its largest fields left out, largest first, until its JSON fits `budget` bytes; `keep` are never
 * left out. Returns the names left out, in the object's order.
 */
export function withoutLargestFields<T extends Record<string, unknown>>(
  value: T,
  budget: number,
  keep: readonly string[],
): { value: Partial<T>; omitted: string[] } {
  const sizes = Object.entries(value)
    .filter(([name]) => !keep.includes(name))
    .map(([name, field]) => ({ name, size: sizeOf(field) }))
    .sort((a, b) => b.size - a.size);
  const omitted = new Set<string>();
  let size = sizeOf(value);
  for (const { name, size: fieldSize } of sizes) {
    if (size <= budget) break;
    omitted.add(name);
    size -= fieldSize + Buffer.byteLength(JSON.stringify(name)) + 2;
  }
  const kept = Object.fromEntries(Object.entries(value).filter(([name]) => !omitted.has(name))) as Partial<T>;
  return { value: kept, omitted: Object.keys(value).filter((name) => omitted.has(name)) };
}

/**
 * The longest a name or title may be where it stands for a contact beside many others (a listing entry, a change): a
 * name may hold 64 KB, and a page of 100 of them must stay within RESULT_BUDGET_BYTES. Reading the contact gives it whole.
 */
export const NAMING_TEXT_MAX = 200;

/** The text, cut to NAMING_TEXT_MAX characters (an ellipsis last) when longer. */
export function clippedName(text: string): string {
  const characters = Array.from(text);
  return characters.length <= NAMING_TEXT_MAX ? text : `${characters.slice(0, NAMING_TEXT_MAX - 1).join('')}…`;
}
