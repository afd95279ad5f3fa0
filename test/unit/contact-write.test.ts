import { describe, expect, it } from 'vitest';
import { normalizeContactInput } from '../../src/domain/contact-input.js';
import { isUuid } from '../../src/domain/ids.js';
import { decideContactWrite, type ExistingContact } from '../../src/store/contact-write.js';
import type { ImportRecord } from '../../src/store/store.js';
import { NULL_VALUES } from '../support/contact-fixtures.js';
import { expectInputError, thrown } from '../support/thrown.js';

const OWNER = '0190a3c4-0000-7000-8000-00000000000a';
const OTHER_OWNER = '0190a3c4-0000-7000-8000-00000000000b';
const CONTACT_ID = '0190a3c4-0000-7000-8000-000000000001';
const NOW = '2024-05-01T09:30:00.000Z';

const record = (label: string, raw: Record<string, unknown>): ImportRecord => ({
  label,
  contact: normalizeContactInput(raw),
});

describe('decideContactWrite insert (no contact has the id)', () => {
  it('inserts with the given id, every unnamed field null, and created_at/updated_at now', () => {
    expect(decideContactWrite(OWNER, record('line 2', { id: CONTACT_ID, name: 'Ada' }), undefined, NOW)).toStrictEqual({
      kind: 'insert',
      id: CONTACT_ID,
      values: { ...NULL_VALUES, name: 'Ada', created_at: NOW, updated_at: NOW },
    });
  });

  it('inserts with a new UUIDv7 when the record has no id', () => {
    const write = decideContactWrite(OWNER, record('line 2', { name: 'Ada' }), undefined, NOW);
    expect(write.kind).toBe('insert');
    expect(isUuid(write.id)).toBe(true);
    expect(write.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('gives each record without an id its own new id', () => {
    const a = decideContactWrite(OWNER, record('line 2', {}), undefined, NOW);
    const b = decideContactWrite(OWNER, record('line 3', {}), undefined, NOW);
    expect(a.id).not.toBe(b.id);
  });

  it('writes every column on insert, so none is left to a database default', () => {
    const write = decideContactWrite(OWNER, record('line 2', {}), undefined, NOW);
    expect(Object.keys(write.values).sort()).toEqual([...Object.keys(NULL_VALUES), 'created_at', 'updated_at'].sort());
    expect(write.values).toStrictEqual({ ...NULL_VALUES, created_at: NOW, updated_at: NOW });
  });

  it('keeps created_at and updated_at the record gives', () => {
    const write = decideContactWrite(
      OWNER,
      record('line 2', { created_at: '2020-01-01T00:00:00Z', updated_at: '2021-01-01T00:00:00+01:00' }),
      undefined,
      NOW,
    );
    expect(write.values).toMatchObject({
      created_at: '2020-01-01T00:00:00.000Z',
      updated_at: '2020-12-31T23:00:00.000Z',
    });
  });

  it('defaults only the timestamp the record leaves out', () => {
    const write = decideContactWrite(OWNER, record('line 2', { created_at: '2020-01-01T00:00:00Z' }), undefined, NOW);
    expect(write.values).toMatchObject({ created_at: '2020-01-01T00:00:00.000Z', updated_at: NOW });
  });

  it('defaults timestamps the record gives as null', () => {
    const write = decideContactWrite(OWNER, record('line 2', { created_at: null, updated_at: '' }), undefined, NOW);
    expect(write.values).toMatchObject({ created_at: NOW, updated_at: NOW });
  });

  it('carries every named field, including nulls, objects and tags', () => {
    const write = decideContactWrite(
      OWNER,
      record('line 2', {
        id: CONTACT_ID,
        email: 'a@b.c',
        phone: null,
        tags: ['x', 'x', 'y'],
        enrichment: { k: 1 },
        research_data: { r: true },
        researched_at: '2024-01-01T00:00:00Z',
      }),
      undefined,
      NOW,
    );
    expect(write).toStrictEqual({
      kind: 'insert',
      id: CONTACT_ID,
      values: {
        ...NULL_VALUES,
        email: 'a@b.c',
        tags: ['x', 'y'],
        enrichment: { k: 1 },
        research_data: { r: true },
        researched_at: '2024-01-01T00:00:00.000Z',
        created_at: NOW,
        updated_at: NOW,
      },
    });
  });
});

describe('decideContactWrite update (the owner already has the id)', () => {
  const mine: ExistingContact = { owner_id: OWNER, is_self: false };

  it('updates only the fields the record names, plus updated_at now, when one of them differs', () => {
    expect(decideContactWrite(OWNER, record('line 2', { id: CONTACT_ID, name: 'Ada' }), mine, NOW)).toStrictEqual({
      kind: 'update',
      id: CONTACT_ID,
      values: { name: 'Ada', updated_at: NOW },
      compared: ['name'],
    });
  });

  it('compares nothing, so writes nothing, when the record names no field or only updated_at', () => {
    for (const fields of [{ id: CONTACT_ID }, { id: CONTACT_ID, updated_at: '2024-01-01T00:00:00.000Z' }]) {
      expect(decideContactWrite(OWNER, record('line 2', fields), mine, NOW)).toMatchObject({ kind: 'update', compared: [] });
    }
  });

  it('gives a new contact that names only updated_at that time as created_at too, never a later one', () => {
    const earlier = '2024-01-01T00:00:00.000Z';
    expect(decideContactWrite(OWNER, record('line 2', { name: 'x', updated_at: earlier }), undefined, NOW).values).toMatchObject({
      created_at: earlier,
      updated_at: earlier,
    });
    const later = '2999-01-01T00:00:00.000Z';
    expect(decideContactWrite(OWNER, record('line 2', { name: 'x', updated_at: later }), undefined, NOW).values).toMatchObject({
      created_at: NOW,
      updated_at: later,
    });
  });

  it('sets named fields to null when the record gives them as null or blank', () => {
    expect(
      decideContactWrite(OWNER, record('line 2', { id: CONTACT_ID, email: null, phone: ' ', tags: null }), mine, NOW).values,
    ).toStrictEqual({ email: null, phone: null, tags: null, updated_at: NOW });
  });

  it('does not touch created_at unless the record names it', () => {
    const write = decideContactWrite(OWNER, record('line 2', { id: CONTACT_ID, name: 'x' }), mine, NOW);
    expect(Object.hasOwn(write.values, 'created_at')).toBe(false);
  });

  it('keeps created_at and updated_at the record gives', () => {
    expect(
      decideContactWrite(
        OWNER,
        record('line 2', { id: CONTACT_ID, created_at: '2020-01-01T00:00:00Z', updated_at: '2020-06-01T00:00:00Z' }),
        mine,
        NOW,
      ).values,
    ).toStrictEqual({ created_at: '2020-01-01T00:00:00.000Z', updated_at: '2020-06-01T00:00:00.000Z' });
  });

  it('uses the record id, lowercased by normalisation', () => {
    const write = decideContactWrite(OWNER, record('line 2', { id: CONTACT_ID.toUpperCase() }), mine, NOW);
    expect(write.id).toBe(CONTACT_ID);
  });
});

describe('decideContactWrite refusals', () => {
  it('refuses an id that belongs to another owner, naming the record', () => {
    expectInputError(
      () => decideContactWrite(OWNER, record('line 7', { id: CONTACT_ID }), { owner_id: OTHER_OWNER, is_self: false }, NOW),
      `line 7: id ${CONTACT_ID} is not one of this user's importable contacts`,
    );
  });

  it("refuses the id of another owner's self row", () => {
    expectInputError(
      () => decideContactWrite(OWNER, record('record 3', { id: CONTACT_ID }), { owner_id: OTHER_OWNER, is_self: true }, NOW),
      `record 3: id ${CONTACT_ID} is not one of this user's importable contacts`,
    );
  });

  it("refuses the id of the owner's own self row, naming the record", () => {
    expectInputError(
      () => decideContactWrite(OWNER, record('record 2', { id: CONTACT_ID, name: 'Me' }), { owner_id: OWNER, is_self: true }, NOW),
      `record 2: id ${CONTACT_ID} is not one of this user's importable contacts`,
    );
  });

  it('gives the same message for another owner and for the self row, revealing nothing about who owns the id', () => {
    const rec = record('line 2', { id: CONTACT_ID });
    const other = thrown(() => decideContactWrite(OWNER, rec, { owner_id: OTHER_OWNER, is_self: false }, NOW));
    const self = thrown(() => decideContactWrite(OWNER, rec, { owner_id: OWNER, is_self: true }, NOW));
    expect((other as Error).message).toBe((self as Error).message);
    expect((other as Error).message).not.toContain(OTHER_OWNER);
  });
});
