import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/errors.js';
import { PLANS, parsePlan, planAllowsApiAccess } from '../../src/domain/plan.js';

function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw, but it returned');
}

describe('plans', () => {
  it('are free and pro', () => {
    expect(PLANS).toEqual(['free', 'pro']);
  });
});

describe('planAllowsApiAccess', () => {
  it('allows the Pro plan', () => {
    expect(planAllowsApiAccess('pro')).toBe(true);
  });

  it('refuses the free plan', () => {
    expect(planAllowsApiAccess('free')).toBe(false);
  });
});

describe('parsePlan', () => {
  it.each(['free', 'pro'] as const)('reads %j', (plan) => {
    expect(parsePlan(plan)).toBe(plan);
  });

  it.each(['', 'Pro', 'PRO', 'Free', ' pro', 'pro ', 'enterprise', 'paid', 'premium'])(
    'refuses %j with InputError quoting it',
    (text) => {
      const error = thrown(() => parsePlan(text));
      expect(error).toBeInstanceOf(InputError);
      expect((error as InputError).message).toBe(`Unknown plan "${text}"; expected one of: free, pro`);
    },
  );
});
