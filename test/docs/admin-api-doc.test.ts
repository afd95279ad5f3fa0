import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domain/api-key.js';

const DOC = readFileSync(resolve(import.meta.dirname, '../../docs/admin-api.md'), 'utf8');
const section = DOC.slice(DOC.indexOf('## Keys a secret scanner recognises'));
const codeBlock = (language: string) => new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(section)![1]!;

/** What docs/admin-api.md tells a secret scanner holds for every key the service makes. */
describe('docs/admin-api.md: the pattern and checksum for secret scanners', () => {
  const work = mkdtempSync(join(tmpdir(), 'admin-api-doc-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('the regular expression finds every key in text, and nothing shorter, longer or of another prefix', () => {
    const pattern = new RegExp(codeBlock('regex').trim(), 'g');
    const keys = Array.from({ length: 200 }, () => generateApiKey('cnt'));
    expect(`config: ${keys.join('\n"')}"`.match(pattern)).toEqual(keys);
    for (const near of [keys[0]!.slice(0, -1), `${keys[0]}x`, keys[0]!.replace('cnt_', 'abc_'), keys[0]!.replace('_live_', '_test_')]) {
      expect(near.match(pattern), near).toBeNull();
    }
  });

  it('the checksum function accepts every key the service makes and refuses one with a character changed', async () => {
    const file = join(work, 'checksum.mjs');
    writeFileSync(file, `${codeBlock('js')}\nexport { hasValidChecksum };\n`);
    const { hasValidChecksum } = (await import(pathToFileURL(file).href)) as { hasValidChecksum: (key: string) => boolean };
    for (let index = 0; index < 500; index += 1) {
      const key = generateApiKey('cnt');
      expect(hasValidChecksum(key), key).toBe(true);
      const changed = key.slice(0, 12) + (key[12] === 'A' ? 'B' : 'A') + key.slice(13);
      expect(hasValidChecksum(changed), changed).toBe(false);
    }
  });
});
