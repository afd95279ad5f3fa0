/**
 * Deterministic benchmark dataset: 1,000,000 contacts over 10,000 users (at scale 1) with a realistic skew —
 * one user with a tenth of the contacts (100,000 at scale 1, 1,000,000 at scale 10), one with exactly 1,000, the
 * rest following a power law — realistic field
 * sizes (a few enrichment objects of several KB), soft-merged duplicates and, through user creation, self rows.
 *
 * Writes `users.ndjson` ({ email, name, plan }) and `contacts.ndjson` (contact fields plus `owner`, the
 * owner's email; merged duplicates carry `merged_into` and come after their survivor) for the CLI's bulk load.
 */
import { createWriteStream, mkdirSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { en } from '@faker-js/faker';
import { prng } from '../test/support/prng.js';

export const BIG_USER_EMAIL = 'big@bench.example';
export const SMALL_USER_EMAIL = 'small@bench.example';
/** The big network's share of all contacts. */
export const BIG_NETWORK_SHARE = 0.1;
export const SMALL_NETWORK = 1_000;

export interface DatasetShape {
  users: number;
  contacts: number;
}

export function shapeForScale(scale: number): DatasetShape {
  return { users: Math.max(3, Math.round(10_000 * scale)), contacts: Math.round(1_000_000 * scale) };
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const chance = (random: () => number, p: number): boolean => random() < p;

function uuid(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${'89ab'[Math.floor(random() * 4)]}${hex.slice(17, 20)}-${hex.slice(20)}`;
}

const flat = (value: unknown): string[] =>
  Array.isArray(value)
    ? value.flatMap(flat)
    : typeof value === 'object' && value !== null
      ? Object.values(value).flatMap(flat)
      : [String(value)];

const FIRST = flat(en.person?.first_name).filter((n) => /^[A-Za-z]+$/.test(n));
const LAST = flat(en.person?.last_name).filter((n) => /^[A-Za-z'-]+$/.test(n));
const CITIES = flat((en.location as Record<string, unknown>)?.city_name).filter((n) => n.length < 30);
const COUNTRIES = flat((en.location as Record<string, unknown>)?.country);
const WORDS = flat((en.lorem as Record<string, unknown>)?.word);
const JOB_AREAS = flat(en.person?.job_area);
const JOB_TYPES = flat(en.person?.job_type);
const COMPANY_WORDS = LAST.slice(0, 400);
const SUFFIXES = ['Inc', 'LLC', 'Group', 'Labs', 'Partners', 'Ventures', 'Technologies', 'GmbH', 'Ltd'];
const SCHOOLS = [
  'MIT',
  'Stanford University',
  'ETH Zürich',
  'University of Oxford',
  'INSEAD',
  'TU München',
  'UC Berkeley',
  'Sciences Po',
  'Tsinghua University',
  'University of Toronto',
];
const TAGS = [
  'investor',
  'founder',
  'friend',
  'alumni',
  'recruiter',
  'customer',
  'advisor',
  'press',
  'engineer',
  'design',
  'family',
  'conference',
];
const SOURCES = ['linkedin', 'gmail', 'calendar', 'manual', 'csv_import', 'vcard'];
const DOMAINS = ['gmail.com', 'yahoo.com', 'outlook.com', 'icloud.com', 'proton.me'];

function sentence(random: () => number, words: number): string {
  const text = Array.from({ length: words }, () => pick(random, WORDS)).join(' ');
  return `${text[0]!.toUpperCase()}${text.slice(1)}.`;
}

/** Network sizes: the big and small users first, then a power law over the rest that sums to the total. */
export function networkSizes(shape: DatasetShape): number[] {
  const rest = shape.contacts - Math.round(BIG_NETWORK_SHARE * shape.contacts) - SMALL_NETWORK;
  const big = shape.contacts - SMALL_NETWORK - Math.max(0, rest);
  const others = shape.users - 2;
  const weights = Array.from({ length: others }, (_, i) => 1 / (i + 1) ** 0.8);
  const sum = weights.reduce((a, b) => a + b, 0);
  const sizes = weights.map((w) => Math.floor((w / sum) * Math.max(0, rest)));
  let leftover = Math.max(0, rest) - sizes.reduce((a, b) => a + b, 0);
  for (let i = sizes.length - 1; leftover > 0; i = (i - 1 + sizes.length) % sizes.length, leftover -= 1) sizes[i]! += 1;
  return [big, SMALL_NETWORK, ...sizes];
}

export function userEmail(index: number): string {
  if (index === 0) return BIG_USER_EMAIL;
  if (index === 1) return SMALL_USER_EMAIL;
  return `user${index}@bench.example`;
}

async function write(stream: NodeJS.WritableStream, line: string): Promise<void> {
  if (!stream.write(line)) await once(stream, 'drain');
}

export async function writeDataset(dir: string, shape: DatasetShape, seed = 20261121): Promise<{ users: number; contacts: number }> {
  mkdirSync(dir, { recursive: true });
  const random = prng(seed);
  const users = createWriteStream(join(dir, 'users.ndjson'));
  const contacts = createWriteStream(join(dir, 'contacts.ndjson'));
  const sizes = networkSizes(shape);
  const start = Date.parse('2021-01-01T00:00:00.000Z');
  const span = 5 * 365 * 86_400_000;
  let written = 0;
  for (const [index, size] of sizes.entries()) {
    const owner = userEmail(index);
    await write(users, `${JSON.stringify({ email: owner, name: `${pick(random, FIRST)} ${pick(random, LAST)}`, plan: 'pro' })}\n`);
    const step = span / Math.max(size, 1);
    const survivors: string[] = [];
    for (let i = 0; i < size; i += 1) {
      const id = uuid(random);
      const created = new Date(start + Math.floor(i * step + random() * step)).toISOString();
      const contact = generateContact(random, id, created);
      // About 1.5% are duplicates of an earlier contact of the same owner, soft-merged into it.
      if (survivors.length > 10 && chance(random, 0.015)) {
        const survivor = pick(random, survivors);
        await write(contacts, `${JSON.stringify({ owner, ...contact, merged_into: survivor })}\n`);
      } else {
        survivors.push(id);
        await write(contacts, `${JSON.stringify({ owner, ...contact })}\n`);
      }
      written += 1;
    }
  }
  users.end();
  contacts.end();
  await Promise.all([once(users, 'finish'), once(contacts, 'finish')]);
  return { users: sizes.length, contacts: written };
}

export function generateContact(random: () => number, id: string, created: string): Record<string, unknown> {
  const first = pick(random, FIRST);
  const last = pick(random, LAST);
  const company = `${pick(random, COMPANY_WORDS)} ${pick(random, SUFFIXES)}`;
  const title = `${pick(random, JOB_AREAS)} ${pick(random, JOB_TYPES)}`;
  const enrichmentSize = random();
  // 35% carry enrichment; 5% of all contacts carry a large one (a few KB, like a scraped profile).
  const enrichment =
    enrichmentSize < 0.05
      ? {
          headline: `${title} at ${company}`,
          summary: sentence(random, 250),
          experience: Array.from({ length: 8 }, () => ({
            company: `${pick(random, COMPANY_WORDS)} ${pick(random, SUFFIXES)}`,
            title: `${pick(random, JOB_AREAS)} ${pick(random, JOB_TYPES)}`,
            description: sentence(random, 40),
          })),
        }
      : enrichmentSize < 0.35
        ? { headline: `${title} at ${company}`, industry: pick(random, JOB_AREAS), employees: Math.floor(random() * 50_000) }
        : null;
  return {
    id,
    name: `${first} ${last}`,
    email: chance(random, 0.9) ? `${first}.${last}@${pick(random, DOMAINS)}`.toLowerCase().replace(/[^a-z0-9.@-]/g, '') : null,
    phone: chance(random, 0.6)
      ? `+1 ${Math.floor(200 + random() * 800)} ${Math.floor(100 + random() * 900)} ${Math.floor(1000 + random() * 9000)}`
      : null,
    company,
    title,
    school: chance(random, 0.4) ? pick(random, SCHOOLS) : null,
    linkedin_url: chance(random, 0.7) ? `https://www.linkedin.com/in/${first}-${last}-${Math.floor(random() * 1e6)}`.toLowerCase() : null,
    location: chance(random, 0.8) ? `${pick(random, CITIES)}, ${pick(random, COUNTRIES)}` : null,
    description: chance(random, 0.3) ? sentence(random, 12 + Math.floor(random() * 60)) : null,
    tags: chance(random, 0.6) ? [...new Set(Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(random, TAGS)))] : null,
    enrichment,
    enriched_at: enrichment ? new Date(Date.parse(created) + 3_600_000).toISOString() : null,
    source: pick(random, SOURCES),
    birthday: chance(random, 0.2)
      ? `19${50 + Math.floor(random() * 50)}-0${1 + Math.floor(random() * 9)}-1${Math.floor(random() * 9)}`
      : null,
    created_at: created,
    updated_at: created,
  };
}
