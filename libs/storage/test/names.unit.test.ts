import { describe, expect, it } from 'vitest';
import {
  assertValidKey,
  contentDisposition,
  InvalidKeyError,
  isValidKey,
  sanitizeFileName,
} from '../src/index.ts';

describe('storage keys', () => {
  it('accepts the `<goferId>/<uuid>` keys callers generate', () => {
    expect(isValidKey('0b6c1d2e-9f5a-4c1e-8a3b-2d4e6f8a0b1c/7d9e4f3a-1b2c-4d5e-8f90-a1b2c3d4e5f6')).toBe(
      true,
    );
    expect(isValidKey('g1/a_b-c')).toBe(true);
  });

  it.each([
    '',
    '..',
    '../etc/passwd',
    'g1/../../x',
    'g1/./x',
    '/abs',
    'g1//x',
    'g1/x/',
    'g1\\x',
    'g1/x.json',
    'g1/%2e%2e',
    'a/b/c/d/e',
    'x'.repeat(129),
    'g1/x\u0000',
  ])('refuses %j (no traversal, no dots, bounded)', (key) => {
    expect(isValidKey(key)).toBe(false);
    expect(() => assertValidKey(key)).toThrow(InvalidKeyError);
  });
});

describe('client file names', () => {
  it('keeps only the last path component', () => {
    expect(sanitizeFileName('../../etc/passwd')).toBe('passwd');
    expect(sanitizeFileName('C:\\Users\\me\\cv.pdf')).toBe('cv.pdf');
  });

  it('drops control and bidi-override characters and collapses whitespace', () => {
    expect(sanitizeFileName('a\u0000b\r\nc\u007f.txt')).toBe('abc.txt');
    expect(sanitizeFileName('invoice\u202Efdp.exe')).toBe('invoicefdp.exe');
    expect(sanitizeFileName('  my   notes .txt ')).toBe('my notes .txt');
  });

  it('bounds the length to 200 characters and keeps the extension', () => {
    const name = sanitizeFileName(`${'é'.repeat(500)}.docx`);
    expect([...name]).toHaveLength(200);
    expect(name.endsWith('.docx')).toBe(true);
  });

  it('never returns an empty name', () => {
    expect(sanitizeFileName(undefined)).toBe('file');
    expect(sanitizeFileName('')).toBe('file');
    expect(sanitizeFileName('dir/')).toBe('file');
    expect(sanitizeFileName('\u0001\u0002')).toBe('file');
    expect(sanitizeFileName('..')).toBe('file');
  });

  it('becomes an RFC 6266 content-disposition with an ASCII fallback and the UTF-8 name', () => {
    expect(contentDisposition('简历 "v2".pdf')).toBe(
      `attachment; filename="__ _v2_.pdf"; filename*=UTF-8''%E7%AE%80%E5%8E%86%20%22v2%22.pdf`,
    );
    expect(contentDisposition('a\r\nSet-Cookie: x')).not.toMatch(/[\r\n]/);
  });
});
