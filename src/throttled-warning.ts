/**
 * A warning about something that may happen thousands of times a second (a failing dependency, an overload): logged at
 * most once per interval, each line saying how many occurrences were left out since the one before.
 */
export class ThrottledWarning {
  private loggedAt = Number.NEGATIVE_INFINITY;
  private leftOut = 0;

  constructor(
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one occurrence: how many were left out before it when this one is to be logged, else null. */
  occurred(): number | null {
    const at = this.now();
    if (at - this.loggedAt < this.intervalMs) {
      this.leftOut += 1;
      return null;
    }
    const leftOut = this.leftOut;
    this.loggedAt = at;
    this.leftOut = 0;
    return leftOut;
  }

  /** The condition is over: the next occurrence is logged at once. Returns how many were left out since the last line. */
  reset(): number {
    const leftOut = this.leftOut;
    this.loggedAt = Number.NEGATIVE_INFINITY;
    this.leftOut = 0;
    return leftOut;
  }
}
