import { describe, expect, it } from 'vitest';
import { accountIdForEmail } from '../src/infra/ids.ts';
import { isDisposableEmail } from '../src/infra/disposable.ts';
import { legacyAccountIdForEmail } from './legacyIds.ts';

const SECRET = 'auth-unit-id-secret-auth-unit-id-secret';

describe('the id of a new account', () => {
  it('is one UUIDv8 per email under one secret, whatever its case or surrounding spaces', () => {
    const id = accountIdForEmail(SECRET, 'ada@example.com');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(accountIdForEmail(SECRET, '  Ada@Example.COM ')).toBe(id);
    expect(accountIdForEmail(SECRET, 'bob@example.com')).not.toBe(id);
  });

  it('cannot be computed from the email alone: another secret gives another id', () => {
    expect(accountIdForEmail(`${SECRET}-other`, 'ada@example.com')).not.toBe(
      accountIdForEmail(SECRET, 'ada@example.com'),
    );
  });

  it('is not the UUIDv5 of the email under the public namespace that ids used to be', () => {
    // The id the previous derivation gave this email (recorded from it), so the comparison is real.
    expect(legacyAccountIdForEmail(' ADA@example.com')).toBe('dd0d130a-6cab-50c6-ad08-bd3301fc2d8b');
    expect(accountIdForEmail(SECRET, 'ada@example.com')).not.toBe(legacyAccountIdForEmail('ada@example.com'));
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
