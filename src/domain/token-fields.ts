/** The fields a signed token's payload (base64url of a JSON array) holds; null when it holds anything else. */
export function tokenFieldsOf(payload: string): unknown[] | null {
  try {
    const fields: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    return Array.isArray(fields) ? (fields as unknown[]) : null;
  } catch {
    return null;
  }
}
