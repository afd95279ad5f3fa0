/** A time in milliseconds since the epoch as the store takes it: ISO 8601 in UTC. */
export const iso = (ms: number) => new Date(ms).toISOString();
