import { describe, expect, it } from 'vitest';
import { ECHO_WINDOW_MS, signalInterpreter, type ShutdownSignal } from '../../src/shutdown-signals.js';

/** The meanings of `signals`, each arriving at its time in ms. */
function meanings(signals: [ShutdownSignal, number][]): string[] {
  let clock = 0;
  const interpret = signalInterpreter(() => clock);
  return signals.map(([signal, at]) => {
    clock = at;
    return interpret(signal);
  });
}

describe('signalInterpreter', () => {
  it('takes the same signal again within the window for the first one arriving another way (npm forwarding a Ctrl-C)', () => {
    expect(
      meanings([
        ['SIGINT', 0],
        ['SIGINT', 3],
        ['SIGINT', ECHO_WINDOW_MS - 1],
      ]),
    ).toEqual(['first', 'echo', 'echo']);
  });

  it('takes the same signal after the window for a second request', () => {
    expect(
      meanings([
        ['SIGINT', 0],
        ['SIGINT', 2],
        ['SIGINT', ECHO_WINDOW_MS],
      ]),
    ).toEqual(['first', 'echo', 'again']);
  });

  it('takes another signal for a second request at once', () => {
    expect(
      meanings([
        ['SIGTERM', 0],
        ['SIGINT', 1],
      ]),
    ).toEqual(['first', 'again']);
  });
});
