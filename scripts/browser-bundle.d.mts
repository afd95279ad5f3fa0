/** The minified script of `entry` (a path), as an IIFE; safe to put inside a <script> element. */
export function bundleForBrowser(entry: string): Promise<string>;
