import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/domain/duration.js';
import { InputError } from '../../src/domain/errors.js';
import { thrown } from '../support/thrown.js';

const message = (text: string): string => `Invalid duration "${text}"; use a positive number followed by s, m, h or d (e.g. 30s, 90d)`;

const DAY = 86_400_000;

describe('parseDuration accepted values', () => {
  it.each([
    ['1s', 1_000],
    ['30s', 30_000],
    ['15m', 900_000],
    ['12h', 43_200_000],
    ['1d', DAY],
    ['90d', 90 * DAY],
    ['3600s', 3_600_000],
    ['007m', 420_000],
  ])('reads %s as %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it('ignores surrounding whitespace', () => {
    expect(parseDuration('  30s\n')).toBe(30_000);
  });

  it('accepts exactly the maximum of 100 years of 365 days, in any unit', () => {
    expect(parseDuration('36500d')).toBe(36_500 * DAY);
    expect(parseDuration('876000h')).toBe(36_500 * DAY);
    expect(parseDuration('52560000m')).toBe(36_500 * DAY);
    expect(parseDuration('3153600000s')).toBe(36_500 * DAY);
  });
});

describe('parseDuration refusals', () => {
  it.each([
    '0s',
    '0m',
    '0h',
    '0d',
    '36501d',
    '876001h',
    '3153600001s',
    '99999999999999999999d',
    '',
    '   ',
    's',
    '30',
    '30 s',
    '-5m',
    '+5m',
    '1.5h',
    '1,5h',
    '30S',
    '30M',
    '2w',
    '1y',
    '30ms',
    '1e3s',
    '0x10s',
    '1h30m',
    'forever',
  ])('refuses %j with InputError quoting it', (text) => {
    const error = thrown(() => parseDuration(text));
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).message).toBe(message(text));
  });

  it('quotes the text untrimmed', () => {
    expect(() => parseDuration(' 0s ')).toThrow(message(' 0s '));
  });
});
