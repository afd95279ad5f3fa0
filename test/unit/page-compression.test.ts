import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { CompressedPages } from '../../src/http/page-compression.js';

/** A page of JSON about `bytes` long that compresses like a listing page, distinct for every key. */
const pageJson = (key: string, bytes: number) =>
  JSON.stringify({ data: Array.from({ length: Math.ceil(bytes / 60) }, (_, i) => ({ id: `${key}-${i}`, name: `Contact ${i}` })) });

describe('CompressedPages', () => {
  it('keeps hot pages as they are within their own budget: pages read often by clients that take no coding never push compressed pages out', async () => {
    const pages = new CompressedPages({ compressedBytes: 60_000, plainBytes: 40_000 });
    const keys = Array.from({ length: 10 }, (_, i) => `owner:1:50:${i * 50}`);
    const json = new Map(keys.map((key) => [key, pageJson(key, 10_000)]));
    for (const key of keys) await pages.encode(key, json.get(key)!, ['gzip']);
    // Every page fits in gzip (about 2 KB each); as they are, three would fill the plain budget.
    for (let read = 0; read < 20; read += 1) {
      for (const key of keys) expect(pages.read(key, [])!.body.toString()).toBe(json.get(key));
    }
    for (const key of keys) {
      const kept = pages.read(key, ['gzip']);
      expect(kept?.coding).toBe('gzip');
      expect(gunzipSync(kept!.body).toString()).toBe(json.get(key));
    }
  });

  it('serves a page read by many clients that take no coding from the bytes kept as they are', async () => {
    const pages = new CompressedPages();
    const key = 'owner:1:50:0';
    const json = pageJson(key, 10_000);
    await pages.encode(key, json, ['gzip']);
    const reads = Array.from({ length: 20 }, () => pages.read(key, [])!.body);
    expect(reads.every((body) => body.toString() === json)).toBe(true);
    // Read 16 times, the page is kept as it is: later reads are the same buffer, not a fresh decompression.
    expect(reads[19]).toBe(reads[18]);
    expect(reads[5]).not.toBe(reads[4]);
  });
});
