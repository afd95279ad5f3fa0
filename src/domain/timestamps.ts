const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)$/i;

/** Canonical form of every date-time the service stores and returns: ISO 8601, UTC, milliseconds. */
export function toIsoMillis(date: Date): string {
  return date.toISOString();
}

/**
 * Parses an ISO 8601 date-time that names its offset (`Z` or `+hh:mm`) into canonical form,
 * or returns null when the text is not one. Dates without an offset are refused: their instant is unknown.
 */
export function parseIsoDateTime(text: string): string | null {
  const match = ISO_DATE_TIME.exec(text.trim());
  if (!match) return null;
  const [, year, month, day, hour, minute, second = '00', fraction = '', zone = 'Z'] = match;
  if (year === '0000') return null;
  const millis = fraction.padEnd(3, '0').slice(0, 3);
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : normalizeOffset(zone);
  const date = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}.${millis}${offset}`);
  if (Number.isNaN(date.getTime())) return null;
  // Date silently rolls over impossible calendar values (Feb 30); a round trip on the UTC fields catches it.
  if (offset === 'Z' && date.toISOString().slice(0, 19) !== `${year}-${month}-${day}T${hour}:${minute}:${second}`) {
    return null;
  }
  return toIsoMillis(date);
}

function normalizeOffset(zone: string): string {
  const digits = zone.slice(1).replace(':', '').padEnd(4, '0');
  return `${zone[0]}${digits.slice(0, 2)}:${digits.slice(2, 4)}`;
}
