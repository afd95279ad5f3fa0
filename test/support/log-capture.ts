import { createLogger } from '../../src/logger.js';

/** The service's real logger, writing its JSON lines into memory for the test to read. */
export function captureLogs(level = 'trace') {
  const chunks: string[] = [];
  const logger = createLogger(level, { write: (chunk: string) => void chunks.push(chunk) });
  return {
    logger,
    /** Everything logged so far, as written. */
    text: () => chunks.join(''),
    /** Every line, parsed. */
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, any>),
  };
}
