import { InputError } from './errors.js';

export const PLANS = ['free', 'pro'] as const;
export type Plan = (typeof PLANS)[number];

/** Only Pro users may call the API (spec §5: keys require a paid plan). */
export function planAllowsApiAccess(plan: Plan): boolean {
  return plan === 'pro';
}

export function parsePlan(text: string): Plan {
  if ((PLANS as readonly string[]).includes(text)) return text as Plan;
  throw new InputError(`Unknown plan "${text}"; expected one of: ${PLANS.join(', ')}`);
}
