import { describe, expect, it } from 'vitest';
import { assertMergeAllowed, type MergeCandidate } from '../../src/domain/merge.js';
import { NotFoundError } from '../../src/domain/errors.js';
import { expectInputError, expectThrown } from '../support/thrown.js';

const expectNotFound = (action: () => unknown, message: string) => expectThrown(action, NotFoundError, message);

const DUP = '0190a3c4-0000-7000-8000-000000000001';
const SURV = '0190a3c4-0000-7000-8000-000000000002';
const ELSEWHERE = '0190a3c4-0000-7000-8000-000000000003';

const listable = (id: string): MergeCandidate => ({ id, is_self: false, merged_into: null });
const selfRow = (id: string): MergeCandidate => ({ id, is_self: true, merged_into: null });
const merged = (id: string): MergeCandidate => ({ id, is_self: false, merged_into: ELSEWHERE });

describe('assertMergeAllowed allowed case', () => {
  it('allows merging one listable contact into another', () => {
    expect(assertMergeAllowed(DUP, SURV, listable(DUP), listable(SURV))).toBeUndefined();
  });
});

describe('assertMergeAllowed refusals', () => {
  it('refuses merging a contact into itself', () => {
    expectInputError(() => assertMergeAllowed(DUP, DUP, listable(DUP), listable(DUP)), 'A contact cannot be merged into itself');
  });

  it('refuses merging a contact into itself when the two ids differ only in case', () => {
    expectInputError(
      () => assertMergeAllowed(DUP.toUpperCase(), DUP, listable(DUP), listable(DUP)),
      'A contact cannot be merged into itself',
    );
  });

  it('refuses merging a contact into itself before looking at the candidates', () => {
    expectInputError(() => assertMergeAllowed(DUP, DUP, undefined, undefined), 'A contact cannot be merged into itself');
  });

  it("refuses a duplicate that is not one of the owner's contacts", () => {
    expectNotFound(() => assertMergeAllowed(DUP, SURV, undefined, listable(SURV)), `Contact ${DUP} is not one of this user's contacts`);
  });

  it("refuses a duplicate that is the owner's self row", () => {
    expectInputError(
      () => assertMergeAllowed(DUP, SURV, selfRow(DUP), listable(SURV)),
      `Contact ${DUP} is the user's own self contact and cannot be merged`,
    );
  });

  it('refuses a duplicate that is already merged, naming where it went', () => {
    expectInputError(
      () => assertMergeAllowed(DUP, SURV, merged(DUP), listable(SURV)),
      `Contact ${DUP} is already merged into ${ELSEWHERE} and cannot be merged`,
    );
  });

  it("refuses a survivor that is not one of the owner's contacts", () => {
    expectNotFound(() => assertMergeAllowed(DUP, SURV, listable(DUP), undefined), `Contact ${SURV} is not one of this user's contacts`);
  });

  it("refuses a survivor that is the owner's self row", () => {
    expectInputError(
      () => assertMergeAllowed(DUP, SURV, listable(DUP), selfRow(SURV)),
      `Contact ${SURV} is the user's own self contact and cannot be merged into`,
    );
  });

  it('refuses a survivor that is already merged, naming where it went', () => {
    expectInputError(
      () => assertMergeAllowed(DUP, SURV, listable(DUP), merged(SURV)),
      `Contact ${SURV} is already merged into ${ELSEWHERE} and cannot be merged into`,
    );
  });

  it('reports the duplicate first when both candidates are refused', () => {
    expectNotFound(() => assertMergeAllowed(DUP, SURV, undefined, undefined), `Contact ${DUP} is not one of this user's contacts`);
    expectInputError(
      () => assertMergeAllowed(DUP, SURV, merged(DUP), selfRow(SURV)),
      `Contact ${DUP} is already merged into ${ELSEWHERE} and cannot be merged`,
    );
  });

  it('checks the self row before the merged state', () => {
    const selfAndMerged: MergeCandidate = { id: DUP, is_self: true, merged_into: ELSEWHERE };
    expectInputError(
      () => assertMergeAllowed(DUP, SURV, selfAndMerged, listable(SURV)),
      `Contact ${DUP} is the user's own self contact and cannot be merged`,
    );
  });

  it('quotes the ids as the caller gave them', () => {
    expectNotFound(
      () => assertMergeAllowed('not-a-uuid', SURV, undefined, listable(SURV)),
      `Contact not-a-uuid is not one of this user's contacts`,
    );
  });
});
