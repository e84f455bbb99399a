import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const exact = new Set(require('disposable-email-domains') as string[]);
const wildcard = new Set(require('disposable-email-domains/wildcard.json') as string[]);

/** True when the email's domain, or any parent domain, is a known disposable provider. */
export function isDisposableEmail(email: string): boolean {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  const labels = domain.split('.');
  for (let i = 0; i < labels.length - 1; i++) {
    const suffix = labels.slice(i).join('.');
    if (exact.has(suffix) || wildcard.has(suffix)) return true;
  }
  return false;
}
