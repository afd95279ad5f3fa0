/** What went wrong in a JSON.parse, and the offset V8 names for some errors (not for all, e.g. "Unexpected token"). */
export function describeJsonError(error: unknown): { reason: string; position: number | null } {
  const message = error instanceof Error ? error.message : String(error);
  const match = / at position (\d+)(?: \(line \d+ column \d+\))?$/.exec(message);
  if (match === null) return { reason: message, position: null };
  return { reason: message.slice(0, match.index).replace(/ in JSON$/, ''), position: Number(match[1]) };
}
