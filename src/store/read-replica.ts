import { ThrottledWarning } from '../throttled-warning.js';
import type { ContactStore } from './contracts/contact-store.js';
import type { Store } from './store.js';

/** Where the replica routing reports fallbacks and recoveries; a pino logger fits. */
export interface ReplicaLog {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}

export interface ReadReplicaOptions {
  log: ReplicaLog;
  /** After the replica fails to answer, reads go to the primary this long before it is tried again (default 5 s). */
  retryAfterMs?: number;
  /** The fallback warning is logged at most once per interval (default 60 s), with the count of reads in between. */
  warnIntervalMs?: number;
  /** Which replica errors send the read to the primary (default: those its dialect calls unreachable). */
  isUnavailable?: (error: unknown) => boolean;
  now?: () => number;
}

const DEFAULT_RETRY_AFTER_MS = 5_000;
const DEFAULT_WARN_INTERVAL_MS = 60_000;

/**
 * Contact reads (list, get, search) go to `replica`; keys, users, webhooks, writes, migrations, readiness and pool
 * metrics stay on `primary`, so a key revoked or a plan changed is enforced as soon as without a
 * replica, however far the replica lags.
 * Reads may be as stale as the replica's replication lag.
 *
 * When the replica cannot answer (refused, dropped, shutting down, in conflict with replay), that read
 * is served by the primary and the replica is left alone for `retryAfterMs`; then a single read probes
 * it while the others stay on the primary, and reads return to it once it answers. close() closes both.
 */
export function withReadReplica(primary: Store, replica: Store, options: ReadReplicaOptions): Store {
  const isUnavailable = options.isUnavailable ?? ((error: unknown) => replica.dialect.isUnreachable(error));
  const health = new ReplicaHealth(options);

  async function read<T>(operation: (contacts: ContactStore) => Promise<T>): Promise<T> {
    if (!health.mayTry()) {
      health.fellBack(null);
      return operation(primary.contacts);
    }
    let result: T;
    try {
      result = await operation(replica.contacts);
    } catch (error) {
      if (!isUnavailable(error)) {
        health.answered();
        throw error;
      }
      health.fellBack(error);
      return operation(primary.contacts);
    }
    health.answered();
    return result;
  }

  return {
    dialect: primary.dialect,
    users: primary.users,
    keys: primary.keys,
    oauth: primary.oauth,
    idempotency: primary.idempotency,
    webhooks: primary.webhooks,
    contacts: {
      listPage: (ownerId, page) => read((contacts) => contacts.listPage(ownerId, page)),
      listPageJson: (ownerId, page) => read((contacts) => contacts.listPageJson(ownerId, page)),
      listingVersion: (ownerId) => read((contacts) => contacts.listingVersion(ownerId)),
      get: (ownerId, id) => read((contacts) => contacts.get(ownerId, id)),
      getMany: (ownerId, ids) => read((contacts) => contacts.getMany(ownerId, ids)),
      search: (ownerId, query, limit) => read((contacts) => contacts.search(ownerId, query, limit)),
      importContacts: (ownerId, records, emails) => primary.contacts.importContacts(ownerId, records, emails),
      importBatches: (ownerId, batches, emails) => primary.contacts.importBatches(ownerId, batches, emails),
      merge: (ownerId, duplicateId, survivorId) => primary.contacts.merge(ownerId, duplicateId, survivorId),
      delete: (ownerId, ids) => primary.contacts.delete(ownerId, ids),
      // The change feed reads the primary: a token taken from it must never run ahead of the copy it is followed on.
      changeLog: (ownerId) => primary.contacts.changeLog(ownerId),
      readChanges: (ownerId, after, limit) => primary.contacts.readChanges(ownerId, after, limit),
      readListed: (ownerId, after, limit) => primary.contacts.readListed(ownerId, after, limit),
      countChangesAfter: (ownerId, after) => primary.contacts.countChangesAfter(ownerId, after),
      positionAt: (ownerId, time) => primary.contacts.positionAt(ownerId, time),
    },
    pruneChanges: (before, maxRows) => primary.pruneChanges(before, maxRows),
    migrate: () => primary.migrate(),
    bulkImport: (users, batches) => primary.bulkImport(users, batches),
    // Ready means the primary answers: keys are checked there, and reads fall back to it.
    ping: () => primary.ping(),
    detachedReason: primary.detachedReason?.bind(primary),
    poolStats: primary.poolStats?.bind(primary),
    close: async () => {
      const closed = await Promise.allSettled([primary.close(), replica.close()]);
      const failure = closed.find((outcome) => outcome.status === 'rejected');
      if (failure) throw failure.reason;
    },
  };
}

/** Whether the replica may be asked, and the rate-limited log of the reads that went to the primary instead. */
class ReplicaHealth {
  private readonly log: ReplicaLog;
  private readonly retryAfterMs: number;
  private readonly now: () => number;
  /** When the replica last failed to answer; null while it answers. */
  private failedAt: number | null = null;
  private probing = false;
  private readonly fallbackWarning: ThrottledWarning;

  constructor(options: ReadReplicaOptions) {
    this.log = options.log;
    this.retryAfterMs = options.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
    this.now = options.now ?? Date.now;
    this.fallbackWarning = new ThrottledWarning(options.warnIntervalMs ?? DEFAULT_WARN_INTERVAL_MS, this.now);
  }

  /** True when this read should go to the replica; after a failure, only one probe at a time once the pause is over. */
  mayTry(): boolean {
    if (this.failedAt === null) return true;
    if (this.probing || this.now() - this.failedAt < this.retryAfterMs) return false;
    this.probing = true;
    return true;
  }

  /** The replica answered (with rows or with an error about the statement): reads go to it again. */
  answered(): void {
    if (this.failedAt === null) return;
    this.failedAt = null;
    this.probing = false;
    this.log.info({ fallbacks: this.fallbackWarning.reset() }, 'read replica is answering again; contact reads go to it');
  }

  /** A read went to the primary: because the replica just failed with `error`, or (null) because it is paused. */
  fellBack(error: unknown): void {
    if (error !== null) {
      this.failedAt = this.now();
      this.probing = false;
    }
    const leftOut = this.fallbackWarning.occurred();
    if (leftOut === null) return;
    this.log.warn(
      { fallbacks: leftOut + 1, ...(error === null ? {} : { reason: reasonOf(error) }) },
      'read replica unavailable; contact reads fall back to the primary',
    );
  }
}

/** The error's code, or its message: connection errors carry no query text or data. */
function reasonOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return reasonOf(error.errors[0]);
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return typeof code === 'string' ? code : String(message ?? error);
}
