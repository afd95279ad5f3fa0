import { Faker, en } from '@faker-js/faker';
import type { ContactValues } from '../domain/contact.js';
import { normalizeContactInput } from '../domain/contact-input.js';
import type { ImportRecord } from '../store/store.js';

const TAGS = ['investor', 'founder', 'friend', 'alumni', 'recruiter', 'customer', 'advisor', 'press', 'engineer', 'design'];
const SOURCES = ['linkedin', 'gmail', 'calendar', 'manual', 'csv_import'];
const SCHOOLS = ['MIT', 'Stanford University', 'ETH Zürich', 'University of Oxford', 'INSEAD', 'TU München', 'UC Berkeley'];

/**
 * Realistic contacts from a fixed seed: the same seed always gives the same people. Created times are
 * spread over the year before `until`, in ascending order, so the list order matches the generation order.
 */
export function generateDemoContacts(count: number, seed: number, until: Date): ImportRecord[] {
  const faker = new Faker({ locale: [en], seed });
  const start = until.getTime() - 365 * 86_400_000;
  const step = (until.getTime() - start) / Math.max(count, 1);
  return Array.from({ length: count }, (_, index) => {
    const first = faker.person.firstName();
    const last = faker.person.lastName();
    const company = faker.company.name();
    const createdAt = new Date(Math.floor(start + index * step)).toISOString();
    const enriched = faker.datatype.boolean(0.4);
    const values: Partial<ContactValues> = {
      name: `${first} ${last}`,
      email: faker.datatype.boolean(0.9) ? faker.internet.email({ firstName: first, lastName: last }).toLowerCase() : null,
      phone: faker.datatype.boolean(0.6) ? faker.phone.number({ style: 'international' }) : null,
      company,
      title: faker.person.jobTitle(),
      school: faker.datatype.boolean(0.5) ? faker.helpers.arrayElement(SCHOOLS) : null,
      linkedin_url: faker.datatype.boolean(0.7)
        ? `https://www.linkedin.com/in/${first}-${last}-${faker.string.alphanumeric(6)}`.toLowerCase()
        : null,
      location: faker.datatype.boolean(0.8) ? `${faker.location.city()}, ${faker.location.country()}` : null,
      description: faker.datatype.boolean(0.3) ? faker.lorem.sentence() : null,
      tags: faker.datatype.boolean(0.7) ? faker.helpers.arrayElements(TAGS, { min: 1, max: 3 }) : null,
      enrichment: enriched
        ? {
            headline: `${faker.person.jobTitle()} at ${company}`,
            industry: faker.commerce.department(),
            employees: faker.number.int({ min: 2, max: 50_000 }),
          }
        : null,
      enriched_at: enriched ? new Date(Date.parse(createdAt) + 3_600_000).toISOString() : null,
      source: faker.helpers.arrayElement(SOURCES),
      birthday: faker.datatype.boolean(0.25) ? faker.date.birthdate().toISOString().slice(0, 10) : null,
      created_at: createdAt,
      updated_at: createdAt,
    };
    return { label: `demo contact ${index + 1}`, contact: normalizeContactInput({ id: faker.string.uuid(), ...values }) };
  });
}
