import { ThrottledWarning } from '../throttled-warning.js';

const WARNING_INTERVAL_MS = 10_000;

export interface DispatcherLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/** The dispatcher's warnings: one per kind of failure at most every WARNING_INTERVAL_MS, saying how many were left out. */
export class DispatcherWarnings {
  private readonly byKind = new Map<string, ThrottledWarning>();

  constructor(private readonly log: DispatcherLog) {}

  warn(kind: string, error: unknown, message: string): void {
    let warning = this.byKind.get(kind);
    if (warning === undefined) this.byKind.set(kind, (warning = new ThrottledWarning(WARNING_INTERVAL_MS)));
    const leftOut = warning.occurred();
    if (leftOut !== null) this.log.warn({ err: error, leftOut }, message);
  }
}
