import { webhookEventType } from '../domain/webhooks.js';
import type { ChangeRecord } from '../store/store.js';
import type { FeedChange } from './change-feed.js';

/** An upsert as the change feed sends it, the contact's JSON embedded as the database stored it. */
const upsertJson = (id: string, changedAt: string, contactJson: string): string =>
  `{"type":"upsert","id":${JSON.stringify(id)},"changed_at":${JSON.stringify(changedAt)},"contact":${contactJson}}`;

/**
 * A change as JSON, exactly as GET /api/v1/contacts/changes gives it (and a webhook event's `data`); an upsert embeds
 * the contact's JSON as the database stored it, as the listing sends it.
 */
export function changeJson(record: FeedChange): string {
  const { state } = record;
  if (state.kind === 'listable') return upsertJson(record.contactId, record.changedAt, state.json);
  const head = `{"type":"${state.kind === 'merged' ? 'merge' : 'delete'}","id":${JSON.stringify(record.contactId)},"changed_at":${JSON.stringify(record.changedAt)}`;
  if (state.kind === 'merged') return `${head},"merged_into":${JSON.stringify(state.mergedInto)}}`;
  return `${head}}`;
}

/** A webhook event's body: `{"type":"contact.upserted","timestamp":<changed_at>,"data":<the change as the feed gives it>}`. */
export function webhookEventJson(record: ChangeRecord): string {
  return `{"type":"${webhookEventType(record.state.kind)}","timestamp":${JSON.stringify(record.changedAt)},"data":${changeJson(record)}}`;
}
