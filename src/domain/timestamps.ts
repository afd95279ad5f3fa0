const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)$/i;

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
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : normalizeOffset(zone);
  // Date silently rolls impossible values over (Feb 30 → Mar 1), so each field is checked first.
  if (!isValidLocalTime(Number(year), Number(month), Number(day), Number(hour), Number(minute), Number(second))) return null;
  if (offset !== 'Z' && (Number(offset.slice(1, 3)) > 14 || Number(offset.slice(4, 6)) > 59)) return null;
  const millis = fraction.padEnd(3, '0').slice(0, 3);
  const date = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}.${millis}${offset}`);
  return Number.isNaN(date.getTime()) ? null : toIsoMillis(date);
}

function isValidLocalTime(year: number, month: number, day: number, hour: number, minute: number, second: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return false;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day <= daysInMonth;
}

function normalizeOffset(zone: string): string {
  const digits = zone.slice(1).replace(':', '').padEnd(4, '0');
  return `${zone[0]}${digits.slice(0, 2)}:${digits.slice(2, 4)}`;
}
