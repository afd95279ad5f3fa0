import { InputError } from './errors.js';

/** How many places an import's outcome lists of each kind (records naming a taken email, empty records); its counts are whole. */
export const IMPORT_LISTED = 100;

/** The fields on which an import matches a record without id to the owner's contact holding the same value. */
export const IMPORT_MATCH_FIELDS = ['email', 'linkedin_url'] as const;
export type ImportMatchField = (typeof IMPORT_MATCH_FIELDS)[number];

/** What `--match` and the admin API's `match` take: the fields, comma-separated, or `none`. */
export const IMPORT_MATCH_TEXT = 'email, linkedin_url, email,linkedin_url or none';

/** Where a record comes from when it is another product's export, as the format it was read in says. */
export interface RecordOrigin {
  /** The `source` of a contact the record creates, unless the record names one: `linkedin`, `google`, `outlook`, `vcard`. */
  source: string;
  /** The fields a record without id is matched on when the import names none (a LinkedIn export: linkedin_url). */
  matchOn: readonly ImportMatchField[];
}

/** `email,linkedin_url`, `email` or `none` as the fields they name; InputError naming `name` (a flag, a parameter) otherwise. */
export function parseImportMatch(text: string, name: string): ImportMatchField[] {
  const words = text.split(',').map((word) => word.trim());
  if (words.length === 1 && words[0] === 'none') return [];
  if (!words.every((word): word is ImportMatchField => (IMPORT_MATCH_FIELDS as readonly string[]).includes(word))) {
    throw new InputError(`${name} must be ${IMPORT_MATCH_TEXT}; got "${text}"`);
  }
  return IMPORT_MATCH_FIELDS.filter((field) => words.includes(field));
}

/** ASCII letters in lower case, nothing else folded: what SQLite's lower() and PostgreSQL's under COLLATE "C" do. */
function foldAsciiCase(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/** The email as imports compare it: ASCII case ignored. */
export function emailKey(email: string): string {
  return foldAsciiCase(email);
}

/**
 * The LinkedIn URL as imports compare it: ASCII case, an `http://` or `https://` scheme, a `www.` before the host, the
 * query, the fragment and trailing slashes ignored, so `https://www.linkedin.com/in/Ada-L/?trk=x` and
 * `http://linkedin.com/in/ada-l` are one profile (`linkedin.com/in/ada-l`). Each step is one each database's
 * `linkedinUrlKey` takes too, in the same order.
 */
export function linkedinUrlKey(url: string): string {
  const lower = foldAsciiCase(url);
  const withoutScheme = lower.replace(/^https?:\/\//, '');
  const withoutWww = withoutScheme.replace(/^www\./, '');
  const withoutQuery = withoutWww.split(/[?#]/, 1)[0]!;
  return withoutQuery.replace(/\/+$/, '');
}
