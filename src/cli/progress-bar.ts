/** Redraws at most this often: a terminal repainting faster only burns CPU. */
const REDRAW_INTERVAL_MS = 100;
const BAR_WIDTH = 24;

export interface ProgressBar {
  /** The number expected in all, as far as known now (it can change while contacts are added or merged). */
  setTotal(total: number): void;
  /** Records progress; redraws unless it drew less than REDRAW_INTERVAL_MS ago. */
  update(done: number): void;
  /** Draws the final state and ends the line. */
  finish(done: number): void;
}

/**
 * A one-line progress bar for a terminal, redrawn in place with `\r`:
 * `[██████░░░░░░] 1200/4800  25%  850/s  ETA 0:04`.
 */
export function createProgressBar(write: (text: string) => void, now: () => number = Date.now): ProgressBar {
  const started = now();
  let total: number | undefined;
  let drawnAt = Number.NEGATIVE_INFINITY;
  const draw = (done: number) => {
    drawnAt = now();
    // `\x1b[K` clears what a longer previous line left on the right.
    write(`\r${renderProgress(done, total, drawnAt - started)}\x1b[K`);
  };
  return {
    setTotal: (value) => {
      total = value;
    },
    update: (done) => {
      if (now() - drawnAt >= REDRAW_INTERVAL_MS) draw(done);
    },
    finish: (done) => {
      draw(done);
      write('\n');
    },
  };
}

/** The bar's text: done/total, percentage, rate and time left (once a rate is known). */
export function renderProgress(done: number, total: number | undefined, elapsedMs: number): string {
  // Contacts added during the walk can make `done` pass the total seen earlier.
  const whole = Math.max(total ?? 0, done);
  const fraction = whole === 0 ? (total === undefined ? 0 : 1) : done / whole;
  const filled = Math.round(fraction * BAR_WIDTH);
  const parts = [`[${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}]`, `${done}/${total === undefined ? '?' : whole}`];
  parts.push(`${Math.floor(fraction * 100)}%`);
  const perSecond = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  if (perSecond > 0) {
    parts.push(`${Math.round(perSecond)}/s`);
    parts.push(`ETA ${formatDuration((whole - done) / perSecond)}`);
  }
  return parts.join('  ');
}

/** `m:ss`, or `h:mm:ss` from an hour on. */
export function formatDuration(seconds: number): string {
  const total = Math.ceil(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}
