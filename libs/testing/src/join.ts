import type { Mailbox } from './mailbox.ts';

export interface JoinedAccount {
  email: string;
  userId: string;
  jwt: string;
  apiKey: string;
  /** The secrets the chain used (for tests that prove they never leak). */
  emailCode: string;
  pairingCode: string;
}

export async function postJson(baseUrl: string, path: string, body?: unknown, token?: string) {
  const res = await fetch(`${baseUrl}/api/v1${path}`, {
    method: 'POST',
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, text, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
}

/** The connector join chain (email code, pairing code, redeem) through the public origin, reading the code from the SMTP sink. */
export async function joinAccount(
  baseUrl: string,
  mailbox: Mailbox,
  email: string,
  platform = 'other',
): Promise<JoinedAccount> {
  const before = mailbox.mailsTo(email);
  const req = await postJson(baseUrl, '/auth/oan/email/request-code', { email });
  if (req.status !== 200) throw new Error(`request-code: ${req.status} ${req.text}`);
  const code = await mailbox.code(email, before + 1);
  const verify = await postJson(baseUrl, '/auth/oan/email/verify', { email, code, platform });
  if (verify.status !== 200) throw new Error(`verify: ${verify.status} ${verify.text}`);
  const jwt = verify.body.token as string;
  const userId = (verify.body.user as { id: string }).id;
  const pairing = await postJson(baseUrl, '/auth/oan/pairing-codes', undefined, jwt);
  if (pairing.status !== 200) throw new Error(`pairing-codes: ${pairing.status} ${pairing.text}`);
  const redeem = await postJson(baseUrl, '/auth/oan/pairing-codes/redeem', { code: pairing.body.code });
  if (redeem.status !== 200) throw new Error(`redeem: ${redeem.status} ${redeem.text}`);
  const pairingCode = pairing.body.code as string;
  return { email, userId, jwt, apiKey: redeem.body.apiKey as string, emailCode: code, pairingCode };
}

/** A fresh pairing code redeemed for an already signed-in account (a second connector key). */
export async function extraKey(baseUrl: string, jwt: string): Promise<string> {
  const pairing = await postJson(baseUrl, '/auth/oan/pairing-codes', undefined, jwt);
  const redeem = await postJson(baseUrl, '/auth/oan/pairing-codes/redeem', { code: pairing.body.code });
  if (redeem.status !== 200) throw new Error(`redeem: ${redeem.status} ${redeem.text}`);
  return redeem.body.apiKey as string;
}
