/** Characters migration 2's search_words column turned into spaces, as that migration was written (it is frozen). */
export const WORD_SEPARATORS = ' \t\n\r-_.,;:!?@#/\\&+()[]{}<>\'"|~*=\u001f';

/**
 * Latin letters, and the combining marks of the accents that migration 4's folding drops after them: the classes of
 * domain/search.ts when it was written.
 */
export const LATIN_LETTER_CLASS =
  'A-Za-z\u00aa\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02af\u1d00-\u1dbf\u1e00-\u1eff\u2c60-\u2c7f\ua720-\ua7ff\uab30-\uab6f';
export const LATIN_ACCENT_CLASS = '\u0300-\u036f';

/** Symbols that glibc classifies as alphanumeric: circled, squared and negative Latin letters (migration 4). */
export const LETTER_SYMBOLS = '\u24b6-\u24e9\u{1f130}-\u{1f149}\u{1f150}-\u{1f169}\u{1f170}-\u{1f189}';

/** Search lexemes (migration 4) keep this many characters of a word, a name or an email. */
export const SEARCH_LEXEME_LENGTH = 200;
/** The search index holds the words of this many characters of a contact's searched text. */
export const SEARCH_TEXT_LENGTH = 20_000;

/** A standard SQL string literal (standard_conforming_strings: only quotes are doubled). */
export function sqlText(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
