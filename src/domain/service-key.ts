import { createHmac, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/** The name of the stored secret (made by a migration, kept beside the OAuth secrets). */
export const SERVICE_KEY_SECRET = 'service-key';

/** Owners whose tag is remembered: an HMAC costs about 2 µs, a lookup a tenth of that, and listings ask on every page. */
const OWNER_TAGS_KEPT = 10_000;

/**
 * The service's own secret, for what it hands out and must recognise later: sync tokens (signed) and entity tags
 * (bound to their owner). Each use has its own purpose string, so a digest made for one is worth nothing for another.
 */
export class ServiceKey {
  /** Names the key inside a token without revealing it: a token signed with another key (another database) is told apart. */
  readonly id: string;
  private readonly ownerTags = new LRUCache<string, string>({ max: OWNER_TAGS_KEPT });

  constructor(private readonly secret: string) {
    this.id = this.digest('key id', '', 6);
  }

  /** base64url of the first `bytes` bytes of HMAC-SHA256 over the purpose and the text. */
  digest(purpose: string, text: string, bytes: number): string {
    return createHmac('sha256', this.secret).update(`${purpose}\0${text}`).digest().subarray(0, bytes).toString('base64url');
  }

  /** Whether `digest` is this key's `bytes`-byte digest of the text for the purpose (constant time). */
  verifies(purpose: string, text: string, digest: string, bytes: number): boolean {
    const expected = Buffer.from(this.digest(purpose, text, bytes));
    const given = Buffer.from(digest);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** A short keyed digest of the owner's id, folded into the owner's entity tags: it says nothing of the id itself. */
  ownerTag(ownerId: string): string {
    let tag = this.ownerTags.get(ownerId);
    if (tag === undefined) {
      tag = this.digest('entity tag owner', ownerId.toLowerCase(), 9);
      this.ownerTags.set(ownerId, tag);
    }
    return tag;
  }
}
