/** The signals that ask the server to shut down gracefully; any other is left to close-with-grace. */
export const SHUTDOWN_SIGNALS = ['SIGINT', 'SIGTERM'] as const satisfies readonly NodeJS.Signals[];
export type ShutdownSignal = (typeof SHUTDOWN_SIGNALS)[number];

/**
 * How long the same signal, arriving again, is the first one reaching the server by another path. Under `npm start`
 * a Ctrl-C reaches npm and the server as one process-group signal, and npm then forwards it to the server (measured:
 * 1-5 ms later). Only a signal after this window is the user's second Ctrl-C.
 */
export const ECHO_WINDOW_MS = 1_000;

/** What a shutdown signal asks for: the first one, an echo of it (ignored), or a second request (stop now). */
export type SignalMeaning = 'first' | 'echo' | 'again';

/** Tells each shutdown signal's meaning from the first one; `now` is the clock (injected by unit tests). */
export function signalInterpreter(now: () => number = Date.now): (signal: ShutdownSignal) => SignalMeaning {
  let first: { signal: ShutdownSignal; at: number } | null = null;
  return (signal) => {
    const at = now();
    if (first === null) {
      first = { signal, at };
      return 'first';
    }
    return signal === first.signal && at - first.at < ECHO_WINDOW_MS ? 'echo' : 'again';
  };
}

/** Calls `onFirst` on the first SIGINT or SIGTERM, and `onAgain` on each later one that is not its echo. */
export function onShutdownSignals(onFirst: (signal: ShutdownSignal) => void, onAgain: (signal: ShutdownSignal) => void): void {
  const interpret = signalInterpreter();
  const handle = (signal: ShutdownSignal) => {
    const meaning = interpret(signal);
    if (meaning === 'first') onFirst(signal);
    else if (meaning === 'again') onAgain(signal);
  };
  for (const signal of SHUTDOWN_SIGNALS) process.on(signal, handle);
}
