import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';

/**
 * The SHA-256 of each released migration's SQL. A database applies a migration once, so a change to one that has
 * shipped never reaches the databases that ran it: change the schema with a new migration instead. Migrations are
 * built from constants of their own (the field lists they were written with, the search text, the trigger bodies)
 * and shared builders (contactJsonExpression); this catches an edit to one of those that would rewrite history.
 */
const RELEASED = {
  sqlite: [
    [1, '4b139a7e132ff7ababee5d988438b2ff74b70b07e3e8a96d2609342b1c9c4c3d'],
    [2, 'b0ba02a3a60b88bed291be96d1a349d8a1c869f8c73ed0208197c1a9f2dc0e58'],
    [3, '601237ba9b0fc6b3b88b948db3237f84a9efc5c34c047b38c80c67ed1daff511'],
    [4, 'b1dbbfb272eaa8985cd4a930d6db73c8b9176f67f61516f921454cec54281f21'],
    [5, 'daf2ad812d2cd66b948f75ea90e87198dc7dce0495cc658549174f42710417a9'],
    [6, '296cdd4ee07eb0789ecbc4e3177b2ef3518a2c673d47c4f9add36f5f15edb30d'],
    [7, '0e69e933613d0e28b480ef62c94d3876db220ae9325dd25d42c0c5e851b50362'],
    [8, '9c17db927026d393fc74ee784b55b9cc56cf8e69a1487f0d7eea378766165b82'],
    [9, '83006f9e3bec37c8702fa778847da86059c1c126a6075342c374c94d1461f35a'],
    [10, '51f2a141279616e3c30965a513e0c086c106ee53bafebe16a005a03c9df7be2c'],
    [11, '5715c43bd79a00d75af742d1857f927962524bca534a10555049b79949d0f7b0'],
    [12, 'd67a366aa48c4be9d7583cb825b98be4604aa46def2f2aaf23efa07d1ec389f2'],
    [13, '4a8e0f28aca26e48010eff1e001b8b4847ca3f624c18131683a3e9b49e182ab4'],
    [14, 'a1ad08b4096db08d63a410eb8b8d0f3c5fe0e4661bb3cd311697a942a57cfa36'],
    [15, 'cd00d2b292cc2f7cc24933d4e65ac062b9bfa3048726e8610d9586d2ca463ed3'],
  ],
  postgres: [
    [1, '71343736da3c030d928ac6ff21346a8cbdef123c825d54b8840fca98c600f805'],
    [2, 'abc6b691427636cfd83f6d9227b1044fc093a8de911ef625efcd415e6386bfd0'],
    [3, '48aa21c8ddcd9bc64f445071631e5cd063afa18b47061b289ae74dd589d978e3'],
    [4, '9b8c99053d614abf0e98d4c667ee3e8ea20e973cfcf02594708bfb0fe84531cf'],
    [5, '9866e5a3a63d6198c14eca461fffaa90d54310bdd62dadd39fd8497f5788c08a'],
    [6, 'ceb4a3f85365dc8c1ac35e83c18e57f3ed01da1ffea56f4fe814b09c9f9eea6a'],
    [7, 'b0644a365c1f8401a8a89be0f7f234286b681560173ea4fb9abcc8625cd733ab'],
    [8, 'e74e1d6ae424f473e9155ee441b610382412237e9fd31e70cd5a5fff932695ec'],
    [9, '20505f3f058eec07fcd146925f1209d97a6fd59a16b788b7dc9e5419162396c4'],
    [10, 'd0f7ee68f79a31a9ad428167f856146bac84328a78bf9feced2d42a947633365'],
    [11, '9519af6ec310253a7a8e4a45c8fe2ba13497f08437b27e3bcfa9a42a8364d506'],
    [12, 'd79473a0ee0f23502e5970df400e08d7fa9c86794b96d0f6d70f469311a7ac72'],
    [13, 'b4cabfa7ac4156b222001895449b4d3ac69d780b5166fb4bfb7fce13b5aa5680'],
    [14, 'd2638ed0f32ad5fc54e0c2814caa91a82f7d238db0b3d8245ee92441b2f81bc9'],
    [15, 'b967bb6c0b1fa52fc79ef3dd3e109dad2a51c1c2aee01c616fd1c33adb66376d'],
  ],
} as const;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe.each([
  { dialect: 'sqlite', migrations: SQLITE_MIGRATIONS },
  { dialect: 'postgres', migrations: POSTGRES_MIGRATIONS },
] as const)('released $dialect migrations', ({ dialect, migrations }) => {
  it('keep their SQL byte for byte (a schema change is a new migration)', () => {
    const released = RELEASED[dialect];
    const current = migrations.slice(0, released.length).map((migration) => [migration.version, sha256(migration.sql)]);
    expect(current).toEqual(released);
  });
});
