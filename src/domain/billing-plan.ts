import { InputError } from './errors.js';

export const BILLING_PLANS = ['free', 'pro'] as const;
export type BillingPlan = (typeof BILLING_PLANS)[number];

/** Only Pro users may call the API (spec §5: keys require a paid plan). */
export function billingPlanAllowsApiAccess(plan: BillingPlan): boolean {
  return plan === 'pro';
}

export function parseBillingPlan(text: string): BillingPlan {
  if ((BILLING_PLANS as readonly string[]).includes(text)) return text as BillingPlan;
  throw new InputError(`Unknown plan "${text}"; expected one of: ${BILLING_PLANS.join(', ')}`);
}
