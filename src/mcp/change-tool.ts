import type { McpServer } from '@modelcontextprotocol/server';
import {
  assertTokenOwner,
  decodeSyncToken,
  encodeSyncToken,
  looksLikeTime,
  parseChangesTime,
  retentionDays,
  SINCE_BEGINNING,
  type SinceParameter,
} from '../domain/changes.js';
import type { Contact } from '../domain/contact.js';
import { PublicError } from '../domain/errors.js';
import { readFeedPage, readFeedPageSince, type ChangeFeedSource, type FeedChange, type FeedPage } from '../operations/change-feed.js';
import type { ServiceKeySource } from '../web/service-key.js';
import { ListChangesInput, ListChangesOutput } from './change-schemas.js';
import { CONTACT_CARDS_TOOL_META } from './contact-cards.js';
import { COMPACT_FIELDS, projectContact, type ContactFieldName } from './contact-fields.js';
import { clippedName, fittingPrefix, RESULT_BUDGET_BYTES, withoutLargestFields } from './result-budget.js';
import { contactLine, READ_ONLY, toolError, type ToolRunner } from './tool-results.js';

/** What list_changes reads: the change feed's log and retention, and the key that signs its tokens. */
export interface ChangeToolDependencies extends ChangeFeedSource {
  serviceKey: ServiceKeySource;
}

/** list_changes' `since`, as its errors name it. */
const SINCE_ARGUMENT: SinceParameter = {
  name: '"since"',
  accepted: `"${SINCE_BEGINNING}", a next_since token that list_changes (or GET /api/v1/contacts/changes) returned, or an ISO 8601 time such as 2026-11-21T00:00:00Z`,
};

/** One change as list_changes gives it. */
interface ChangeEntry {
  type: 'upsert' | 'merge' | 'delete';
  id: string;
  name: string | null;
  changed_at: string;
  merged_into?: string;
  merged_into_name?: string | null;
  contact?: Partial<Contact>;
}

const TYPE_OF: Record<FeedChange['state']['kind'], ChangeEntry['type']> = { listable: 'upsert', merged: 'merge', gone: 'delete' };

/**
 * list_changes: the REST change feed's walk (operations/change-feed.ts) for a model, from "0", a token, or a time.
 * Every read carries the owner from the key; a result stays within RESULT_BUDGET_BYTES, and its next_since then
 * continues right after the last change it holds.
 */
export function registerChangeTool(server: McpServer, deps: ChangeToolDependencies, run: ToolRunner): void {
  const keptDays = retentionDays(deps.retentionMs);
  const startAgain =
    `"since" is further back than the change log reaches (it keeps ${keptDays} days of changes), or from before ` +
    `it was cleared or from another database. Start again with since="${SINCE_BEGINNING}": every contact, then the changes made meanwhile.`;
  server.registerTool(
    'list_changes',
    {
      title: 'List changes',
      description:
        'What changed in your contacts since a point, oldest first, as GET /api/v1/contacts/changes gives it: new or ' +
        'updated contacts (upsert, with the contact), merged duplicates (merge, with merged_into and both names) and ' +
        'deleted contacts (delete, with the name they had). since is "0" (every contact, then what changed ' +
        'meanwhile), a next_since from a previous answer, or an ISO 8601 time ("who joined this week": the time 7 days ' +
        `ago). Follow next_since while has_more is true; the log keeps ${keptDays} days of changes.`,
      inputSchema: ListChangesInput,
      outputSchema: ListChangesOutput,
      annotations: { title: 'List changes', ...READ_ONLY },
      _meta: CONTACT_CARDS_TOOL_META,
    },
    ({ since, limit, fields }) =>
      run(async (ownerId) => {
        const now = Date.now();
        const key = await deps.serviceKey.ready();
        let page: FeedPage;
        let answered = since;
        try {
          if (looksLikeTime(since)) {
            const time = parseChangesTime('"since"', since, now);
            answered = new Date(time).toISOString();
            page = await readFeedPageSince(deps, ownerId, time, limit, now);
          } else {
            const token = since === SINCE_BEGINNING ? null : decodeSyncToken(since, key, SINCE_ARGUMENT);
            if (token !== null) assertTokenOwner(token, ownerId, SINCE_ARGUMENT);
            page = await readFeedPage(deps, ownerId, token, limit, now);
          }
        } catch (error) {
          // The REST feed's 410: the log cannot follow from there.
          if (error instanceof PublicError && error.status === 410) return toolError(startAgain);
          throw error;
        }
        const entries = page.changes.map((change) => changeEntry(change, fields ?? COMPACT_FIELDS));
        const { kept, omitted } = fittedEntries(entries);
        const cut = kept.length < entries.length;
        const next = cut ? page.nextAfter(kept.length) : page.next;
        const hasMore = cut || page.hasMore;
        const nextSince = encodeSyncToken(next, key);
        const truncated = cut || omitted.length > 0;
        const structured = { since: answered, data: kept, next_since: nextSince, has_more: hasMore, truncated };
        const budgetNote = [
          ...(cut ? [`Cut from ${entries.length} changes to fit the size budget.`] : []),
          ...(omitted.length === 0
            ? []
            : [`Left out of ${kept[0]!.id} to fit the size budget: ${omitted.join(', ')}; ask get_contact for each alone with fields.`]),
        ];
        return {
          structuredContent: structured,
          content: [
            { type: 'text', text: summaryLines(structured, budgetNote).join('\n') },
            { type: 'text', text: JSON.stringify(structured) },
          ],
        };
      }),
  );
}

function changeEntry(change: FeedChange, fields: readonly ContactFieldName[]): ChangeEntry {
  const { state } = change;
  const head = { type: TYPE_OF[state.kind], id: change.contactId };
  if (state.kind === 'listable') {
    const contact = JSON.parse(state.json) as Contact;
    return { ...head, name: clippedOrNull(contact.name), changed_at: change.changedAt, contact: projectContact(contact, fields) };
  }
  if (state.kind === 'merged') {
    return {
      ...head,
      name: clippedOrNull(state.name),
      changed_at: change.changedAt,
      merged_into: state.mergedInto,
      merged_into_name: clippedOrNull(state.mergedIntoName),
    };
  }
  return { ...head, name: clippedOrNull(state.name), changed_at: change.changedAt };
}

/** An entry's name, cut as a listing's: it names the change (an upsert's contact holds the whole name), and a name may hold 64 KB. */
const clippedOrNull = (name: string | null): string | null => (name === null ? null : clippedName(name));

/**
 * The longest prefix of the entries within the budget; at least the first, its contact's largest fields left out
 * when it alone is too large, so that a walk always moves on.
 */
function fittedEntries(entries: ChangeEntry[]): { kept: ChangeEntry[]; omitted: string[] } {
  const kept = fittingPrefix(entries, RESULT_BUDGET_BYTES);
  const [first] = entries;
  // A merge or a deletion, its names clipped, always fits: only an upsert's contact can be too large alone.
  if (kept.length > 0 || first?.contact === undefined) return { kept, omitted: [] };
  const overhead = Buffer.byteLength(JSON.stringify({ ...first, contact: {} }));
  const { value, omitted } = withoutLargestFields(first.contact, RESULT_BUDGET_BYTES - overhead, ['id', 'name']);
  return { kept: [{ ...first, contact: value }], omitted };
}

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

/** A summary line, what the size budget left out, one line per change, and what to do next. */
function summaryLines(
  answer: { since: string; data: ChangeEntry[]; next_since: string; has_more: boolean },
  budgetNote: string[],
): string[] {
  const count = (type: ChangeEntry['type']) => answer.data.filter((entry) => entry.type === type).length;
  const from =
    answer.since === SINCE_BEGINNING
      ? 'from the beginning'
      : looksLikeTime(answer.since)
        ? `since ${answer.since}`
        : 'since the given next_since';
  const heading =
    answer.data.length === 0
      ? `No changes ${from}.`
      : `${plural(answer.data.length, 'change', 'changes')} ${from}: ${count('upsert')} new or updated, ${count('merge')} merged, ` +
        `${count('delete')} deleted.`;
  const next = answer.has_more
    ? `More changes wait: call list_changes with since="${answer.next_since}".`
    : `Up to date. For the changes from now on, call list_changes later with since="${answer.next_since}".`;
  return [heading, ...budgetNote, ...answer.data.map(changeLine), next];
}

function changeLine(entry: ChangeEntry): string {
  const named = `${entry.name ?? '(no name)'} (id ${entry.id})`;
  if (entry.type === 'upsert') return `- ${entry.changed_at} new or updated: ${contactLine(entry.contact!).slice(2)}`;
  if (entry.type === 'merge') {
    return `- ${entry.changed_at} merged: ${named} into ${entry.merged_into_name ?? '(no name)'} (id ${entry.merged_into})`;
  }
  return `- ${entry.changed_at} deleted: ${named}`;
}
