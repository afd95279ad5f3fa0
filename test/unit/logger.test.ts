import { describe, expect, it } from 'vitest';
import { loggableError, loggablePath } from '../../src/logger.js';
import { captureLogs } from '../support/log-capture.js';

const SECRET = 'cnt_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAbcdefg';

describe('loggableError: class, code and stack frames, never the message or other fields', () => {
  it('keeps the class, a plain code and the frames', () => {
    const error = Object.assign(new TypeError(`bad ${SECRET}`), { code: '57014', detail: `(${SECRET})` });
    const logged = loggableError(error);
    expect(logged.type).toBe('TypeError');
    expect(logged.code).toBe('57014');
    expect(logged.stack).toMatch(/^\s+at /);
    expect(JSON.stringify(logged)).not.toContain(SECRET);
  });

  it('drops a code that is not a plain token', () => {
    expect(loggableError(Object.assign(new Error('x'), { code: `E ${SECRET}` }))).not.toHaveProperty('code');
    expect(loggableError(Object.assign(new Error('x'), { code: 42 }))).not.toHaveProperty('code');
  });

  it('says only the type of a thrown non-error', () => {
    expect(loggableError(SECRET)).toEqual({ type: 'string' });
    expect(loggableError({ key: SECRET })).toEqual({ type: 'object' });
  });
});

describe('loggablePath', () => {
  it('drops the query string and redacts key-shaped segments of any prefix', () => {
    expect(loggablePath(`/api/v1/contacts?limit=5&key=${SECRET}`)).toBe('/api/v1/contacts');
    expect(loggablePath(`/${SECRET}/x`)).toBe('/[redacted]/x');
    expect(loggablePath('/acme_test_abc123XYZ')).toBe('/[redacted]');
  });

  it('bounds a long path', () => {
    expect(loggablePath(`/${'a'.repeat(20_000)}`)).toHaveLength(201);
  });
});

describe('createLogger', () => {
  it('never lets pino use an error’s message as the line’s message', () => {
    const logs = captureLogs('trace');
    logs.logger.error(new Error(`crash ${SECRET}`));
    logs.logger.fatal({ err: new Error(`crash ${SECRET}`) });
    logs.logger.warn({ err: new Error(`crash ${SECRET}`) }, 'explained');
    expect(logs.lines().map((line) => line.msg)).toEqual(['error', 'error', 'explained']);
    expect(logs.text()).not.toContain(SECRET);
  });

  it('redacts an Authorization header logged by hand', () => {
    const logs = captureLogs('info');
    logs.logger.info({ headers: { authorization: `Bearer ${SECRET}` }, authorization: SECRET }, 'by hand');
    expect(logs.text()).not.toContain(SECRET);
  });
});
