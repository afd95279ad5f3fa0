/** One use of a key: recorded as its last_used_at unless a use after `unlessUsedAfter` is recorded already. */
export interface KeyUse {
  keyId: string;
  usedAt: string;
  unlessUsedAfter: string;
}

/**
 * Records the uses without waiting for any lock another connection holds; resolves to the uses it had to leave
 * because of such a lock. Throws when the database fails otherwise.
 */
export type RecordKeyUsesNow = (uses: KeyUse[]) => Promise<KeyUse[]>;

/** How often uses left by a busy database are tried again. */
const RETRY_MS = 1_000;
/** Keys whose use waits for a retry, at most: past this the oldest is forgotten, so memory stays bounded. */
export const MAX_DEFERRED_KEYS = 10_000;

/**
 * Key bookkeeping that never waits on a lock: a use is recorded at once if the database lets it, else kept (the
 * latest per key) and tried again every RETRY_MS. What is written is the time of use, so a deferred write is late
 * but exact. A retry that fails outright drops its uses, as the first attempt's failure does.
 */
export class KeyUseRecorder {
  private readonly deferred = new Map<string, KeyUse>();
  private timer: NodeJS.Timeout | null = null;
  private retrying: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly recordNow: RecordKeyUsesNow,
    private readonly retryMs = RETRY_MS,
  ) {}

  async record(use: KeyUse): Promise<void> {
    this.defer(await this.recordNow([use]));
  }

  /** Stops retrying, after one last attempt that does not wait either; uses still left then are lost. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.retrying;
    await this.retry();
  }

  private defer(uses: KeyUse[]): void {
    for (const use of uses) {
      const kept = this.deferred.get(use.keyId);
      if (kept !== undefined && kept.usedAt >= use.usedAt) continue;
      this.deferred.delete(use.keyId);
      this.deferred.set(use.keyId, use);
      if (this.deferred.size > MAX_DEFERRED_KEYS) this.deferred.delete(this.deferred.keys().next().value!);
    }
    if (this.deferred.size === 0 || this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.retrying = this.retry();
    }, this.retryMs);
    // Bookkeeping alone must not keep a process alive.
    this.timer.unref();
  }

  private async retry(): Promise<void> {
    if (this.deferred.size === 0) return;
    const uses = [...this.deferred.values()];
    this.deferred.clear();
    try {
      this.defer(await this.recordNow(uses));
    } catch {
      // Nobody awaits a retry to hear of it; the first attempt's failure went to the caller.
    }
  }
}
