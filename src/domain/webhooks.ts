/** The events a webhook endpoint can subscribe to: one per kind of change in the owner's change log. */
export const WEBHOOK_EVENT_TYPES = ['contact.upserted', 'contact.merged', 'contact.deleted'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const WEBHOOK_STATUSES = ['enabled', 'disabled'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];
