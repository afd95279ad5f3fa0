import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * The code of the fenced block that follows `<!-- recipe:NAME -->` in a doc, exactly as a reader copies it, with each
 * placeholder the doc shows (`from`) replaced by what this test runs against (`to`). A placeholder the block lacks fails:
 * the doc and the test would have parted ways.
 */
export function docRecipe(doc: string, name: string, placeholders: Readonly<Record<string, string>> = {}): string {
  const text = readFileSync(resolve(ROOT, doc), 'utf8');
  const match = new RegExp(`<!-- recipe:${name} -->\\n\`\`\`[a-z]*\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(text);
  if (!match) throw new Error(`${doc} has no fenced block after <!-- recipe:${name} -->`);
  let code = match[1]!;
  for (const [from, to] of Object.entries(placeholders)) {
    if (!code.includes(from)) throw new Error(`${doc}'s ${name} recipe no longer shows ${from}`);
    code = code.replaceAll(from, to);
  }
  return code;
}
