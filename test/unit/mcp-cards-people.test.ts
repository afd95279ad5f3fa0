import { describe, expect, it } from 'vitest';
import { cardsOf, failedCallView, mailtoOf, telOf } from '../../src/mcp/cards/people.js';

const ADA = {
  id: 'a',
  name: 'Ada Lovelace',
  title: null,
  company: 'Analytical Engines',
  email: 'ada@example.com',
  phone: null,
  tags: ['math'],
};

describe('the contact cards’ reading of a tool result', () => {
  it('links a plain address only: an address carrying a query or markup stays text', () => {
    expect(mailtoOf('ada@example.com')).toBe('mailto:ada@example.com');
    expect(mailtoOf('ada@example.com?bcc=eve@example.com')).toBeNull();
    expect(mailtoOf('ada@example.com"><b>')).toBeNull();
    expect(mailtoOf('not an address')).toBeNull();
  });

  it('dials the digits of a number as written, and gives no link without enough of them', () => {
    expect(telOf('+1 (415) 555-0100')).toBe('tel:+14155550100');
    expect(telOf('0049+30 1234')).toBe('tel:0049301234');
    expect(telOf('ext. 12')).toBeNull();
  });

  it('says when a page of list_contacts was cut, and when it is empty', () => {
    expect(cardsOf({ data: [ADA], pagination: {}, truncated: true })).toMatchObject({
      notes: ['More contacts than fit here: the next page has the rest.'],
      cards: [{ name: 'Ada Lovelace', company: 'Analytical Engines', email: 'ada@example.com', tags: ['math'], status: null }],
    });
    expect(cardsOf({ data: [], pagination: {}, truncated: false }).notes).toEqual(['No contacts on this page.']);
  });

  it('says when a search found nobody, and draws no note for a clear hit', () => {
    expect(cardsOf({ query: 'zed', ambiguous: false, data: [] })).toEqual({ notes: ['No contacts match “zed”.'], cards: [] });
    expect(cardsOf({ query: 'ada', ambiguous: false, data: [{ ...ADA, matched: ['name'] }] })).toMatchObject({
      notes: [],
      cards: [{ matched: ['name'] }],
    });
  });

  it('names the survivor of a merge when the same page of changes holds it', () => {
    const changes = {
      since: '0',
      data: [
        { type: 'upsert', id: 'a', name: 'Ada Lovelace', changed_at: '2024-06-01T00:00:00.000Z', contact: ADA },
        { type: 'merge', id: 'd', name: 'Ada L.', changed_at: '2024-06-01T00:00:00.000Z', merged_into: 'a' },
      ],
      next_since: 't',
      has_more: false,
    };
    expect(cardsOf(changes).cards.map((card) => card.status)).toEqual([null, { kind: 'merged', words: 'Merged into Ada Lovelace' }]);
    expect(cardsOf({ ...changes, data: [] }).notes).toEqual(['No changes.']);
  });

  it('names the survivor of a merge by the name list_changes gives, else by its id', () => {
    const merge = { type: 'merge', id: 'd', name: 'Ada L.', changed_at: '2024-06-01T00:00:00.000Z', merged_into: 'a' };
    const named = { since: '0', data: [{ ...merge, merged_into_name: 'Ada Lovelace' }], next_since: 't', has_more: false };
    expect(cardsOf(named).cards[0]!.status).toEqual({ kind: 'merged', words: 'Merged into Ada Lovelace' });
    expect(cardsOf({ ...named, data: [merge] }).cards[0]!.status).toEqual({ kind: 'merged', words: 'Merged into contact a' });
  });

  it('draws nothing but a note from a result without structured content, or from a failed call', () => {
    expect(cardsOf(undefined)).toEqual({ notes: ['This result has no contacts to show.'], cards: [] });
    expect(failedCallView([{ type: 'text', text: 'Contact not found' }])).toEqual({ notes: ['Contact not found'], cards: [] });
    expect(failedCallView([])).toEqual({ notes: ['The tool call failed.'], cards: [] });
  });

  it('keeps only strings of a contact: a value of another type is left out, not drawn as "[object Object]"', () => {
    const [card] = cardsOf({ contact: { id: 'a', name: { first: 'Ada' }, tags: ['math', 7, ''] }, merged_from: null }).cards;
    expect(card).toMatchObject({ name: null, tags: ['math'] });
  });
});
