import { expect } from 'vitest';
import { InputError } from '../../src/domain/errors.js';

/** The error `action` throws; fails the test when it returns. */
export function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw, but it returned');
}

/** The error `promise` rejects with, of class `type`; fails the test when it resolves or rejects with another class. */
export async function rejection<E extends Error>(promise: Promise<unknown>, type: new (...args: never[]) => E): Promise<E> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(type);
    return error as E;
  }
  throw new Error('expected the call to reject, but it resolved');
}

/** `action` throws an error of class `type` with exactly `message`. */
export function expectThrown(action: () => unknown, type: new (...args: never[]) => Error, message: string): void {
  const error = thrown(action);
  expect(error).toBeInstanceOf(type);
  expect((error as Error).message).toBe(message);
}

/** `action` throws an InputError with exactly `message`. */
export function expectInputError(action: () => unknown, message: string): void {
  expectThrown(action, InputError, message);
}
