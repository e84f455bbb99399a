import { describe, expect, it } from 'vitest';
import { accountIdForEmail, uuidv5 } from '../src/infra/ids.ts';
import { isDisposableEmail } from '../src/infra/disposable.ts';

describe('uuidv5', () => {
  it('matches the RFC 4122 reference value', () => {
    expect(uuidv5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
  });
});

describe('an account id', () => {
  it('is one UUIDv5 per email, whatever its case or surrounding spaces', () => {
    const id = accountIdForEmail('ada@example.com');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(accountIdForEmail('  Ada@Example.COM ')).toBe(id);
    expect(accountIdForEmail('bob@example.com')).not.toBe(id);
  });
});

describe('a disposable email', () => {
  it('is recognised by its domain or a parent domain', () => {
    expect(isDisposableEmail('x@mailinator.com')).toBe(true);
    expect(isDisposableEmail('x@eu.mailinator.com')).toBe(true);
    expect(isDisposableEmail('x@gmail.com')).toBe(false);
    expect(isDisposableEmail('x@example.com')).toBe(false);
  });
});
