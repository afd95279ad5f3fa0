/** timestamptz output in the ISO DateStyle: `2024-05-01 09:30:00.123456+00`, offset possibly `+05:30[:ss]`, maybe ` BC`. */
const TIMESTAMPTZ_TEXT = /^(\d{4,})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([+-]\d{2})(?::(\d{2}))?(?::(\d{2}))?( BC)?$/;

/**
 * Turns timestamptz text into the service's canonical form, ISO 8601 UTC with exactly milliseconds
 * (`2024-05-01T09:30:00.123Z`); microseconds are truncated. Other session time zones are converted.
 */
export function parseTimestamptz(text: string): string {
  const match = TIMESTAMPTZ_TEXT.exec(text);
  if (!match) throw new Error(`Unexpected timestamptz value "${text}"`);
  const [, year = '', month = '', day = '', hour = '', minute = '', second = '', fraction = ''] = match;
  const [offsetHours = '', offsetMinutes = '00', offsetSeconds = '00', bc] = match.slice(8);
  const millis = fraction.padEnd(3, '0').slice(0, 3);
  const utc = offsetHours === '+00' && offsetMinutes === '00' && offsetSeconds === '00';
  if (utc && bc === undefined && year.length === 4) {
    return `${year}-${month}-${day}T${hour}:${minute}:${second}.${millis}Z`;
  }
  const local = new Date(0);
  local.setUTCFullYear(bc === undefined ? Number(year) : 1 - Number(year), Number(month) - 1, Number(day));
  local.setUTCHours(Number(hour), Number(minute), Number(second), Number(millis));
  const sign = offsetHours.startsWith('-') ? -1 : 1;
  const offsetMs = sign * (Math.abs(Number(offsetHours)) * 3600 + Number(offsetMinutes) * 60 + Number(offsetSeconds)) * 1000;
  return new Date(local.getTime() - offsetMs).toISOString();
}

/**
 * SQL for a timestamptz as text that casts back to the same microsecond whatever the session's TimeZone: what
 * `::text` gives in UTC (`2024-05-01 09:30:00.123456+00`), so a sort key or token is the same text from every
 * connection, behind a transaction pooler whose server connections keep the database's default zone too.
 */
export function utcTimestampText(expression: string): string {
  return `((${expression}) AT TIME ZONE 'UTC')::text || '+00'`;
}
