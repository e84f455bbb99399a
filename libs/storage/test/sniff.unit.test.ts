import { describe, expect, it } from 'vitest';
import { declaredMime } from '../src/index.ts';

describe('declaredMime', () => {
  it.each([
    ['a declared type', 'application/pdf', 'cv.txt', 'application/pdf'],
    ['a declared text/plain, whatever the extension', 'text/plain', 'x.pdf', 'text/plain'],
    ['a declared text/plain with parameters', 'Text/Plain; charset=utf-8', 'x.png', 'text/plain'],
    ['a declared type outside the whitelists', 'image/gif', 'a.png', 'image/gif'],
  ])('keeps %s', (_what, partType, fileName, mime) => {
    expect(declaredMime(partType, fileName)).toBe(mime);
  });

  it.each([
    ['an absent type', undefined, 'x.pdf', 'application/pdf'],
    [
      'an empty type',
      '',
      'cv.DOCX',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    ],
    ['application/octet-stream', 'application/octet-stream', 'me.png', 'image/png'],
    ['application/octet-stream with parameters', 'Application/Octet-Stream; x=1', 'a.jpeg', 'image/jpeg'],
  ])('takes the extension for %s', (_what, partType, fileName, mime) => {
    expect(declaredMime(partType, fileName)).toBe(mime);
  });

  it('without a known extension: an absent type is text/plain (RFC 7578 §4.4), octet-stream stays', () => {
    expect(declaredMime(undefined, 'README')).toBe('text/plain');
    expect(declaredMime(undefined, 'a.exe')).toBe('text/plain');
    expect(declaredMime('application/octet-stream', 'a.exe')).toBe('application/octet-stream');
  });
});
