/** The media type of a Content-Type, lower case and without parameters: `text/csv` of `text/csv; charset=UTF-8`. */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
}
