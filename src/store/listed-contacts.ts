import type { Contact } from '../domain/contact.js';
import type { PageRequest } from '../domain/pagination.js';
import { PagedListing, parsePageJson, type PagedListingOptions, type PageSource } from './paged-listing.js';
import type { ContactPage, ContactPageJson } from './contracts/contact-store.js';

/** The listing half of a ContactStore, the same on every database: pages come from the dialect's page source. */
export abstract class ListedContacts {
  private readonly listing: PagedListing;

  protected constructor(source: PageSource, options: PagedListingOptions) {
    this.listing = new PagedListing(source, options);
  }

  async listPage(ownerId: string, page: PageRequest): Promise<ContactPage> {
    return parsePageJson<Contact>(await this.listPageJson(ownerId, page));
  }

  async listPageJson(ownerId: string, page: PageRequest): Promise<ContactPageJson> {
    return this.listing.read(ownerId, page);
  }

  async listingVersion(ownerId: string): Promise<number> {
    return this.listing.version(ownerId);
  }
}
