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

  it('decodes every level of percent-encoding, byte by byte, before redacting', () => {
    const escaped = (text: string) => [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
    const times = (text: string, count: number): string => (count === 0 ? text : times(escaped(text), count - 1));
    expect(loggablePath(`/x/${times(SECRET, 5)}`)).toBe('/x/[redacted]');
    expect(loggablePath(`/x/%FF${escaped(SECRET)}`)).toBe('/x/\uFFFD[redacted]');
    expect(loggablePath(`/x/${SECRET.slice(0, 20)}%C3${SECRET.slice(20)}`)).toBe('/x/[redacted][redacted]');
    expect(loggablePath('/caf%C3%A9/%E2%82%AC')).toBe('/café/€');
    // More levels than a request line can hold: nothing of it is logged.
    expect(loggablePath(`/x/${times('a', 13)}`)).toBe('[redacted]');
  });

  it('redacts long mixed-case tokens (a key’s secret alone, an OAuth token) and keeps UUIDs and hex ids', () => {
    expect(loggablePath('/oauth/x/Xk3_pQ9-ZrT2vBn8LmW4yHs6JdC1aFgE0uIoPqRsTuV')).toBe('/oauth/x/[redacted]');
    expect(loggablePath(`/${SECRET.slice('cnt_live_'.length)}`)).toBe('/[redacted]');
    expect(loggablePath('/api/v1/contacts/0b6f2c3e-8a1d-4f5e-9c7b-2d4e6f8a0b1c')).toBe(
      '/api/v1/contacts/0b6f2c3e-8a1d-4f5e-9c7b-2d4e6f8a0b1c',
    );
    expect(loggablePath('/.well-known/oauth-authorization-server')).toBe('/.well-known/oauth-authorization-server');
    expect(loggablePath('/docs/redoc-2.5.1.standalone.js')).toBe('/docs/redoc-2.5.1.standalone.js');
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
