import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/errors.js';
import { BILLING_PLANS, parseBillingPlan, billingPlanAllowsApiAccess } from '../../src/domain/billing-plan.js';
import { thrown } from '../support/thrown.js';

describe('plans', () => {
  it('are free and pro', () => {
    expect(BILLING_PLANS).toEqual(['free', 'pro']);
  });
});

describe('billingPlanAllowsApiAccess', () => {
  it('allows the Pro plan', () => {
    expect(billingPlanAllowsApiAccess('pro')).toBe(true);
  });

  it('refuses the free plan', () => {
    expect(billingPlanAllowsApiAccess('free')).toBe(false);
  });
});

describe('parseBillingPlan', () => {
  it.each(['free', 'pro'] as const)('reads %j', (plan) => {
    expect(parseBillingPlan(plan)).toBe(plan);
  });

  it.each(['', 'Pro', 'PRO', 'Free', ' pro', 'pro ', 'enterprise', 'paid', 'premium'])('refuses %j with InputError quoting it', (text) => {
    const error = thrown(() => parseBillingPlan(text));
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).message).toBe(`Unknown plan "${text}"; expected one of: free, pro`);
  });
});
