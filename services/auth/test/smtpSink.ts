import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { vi } from 'vitest';

export interface SmtpSink {
  url: string;
  /** Every message received, in order: recipients (lower-cased) and raw text. */
  messages: { to: string[]; raw: string }[];
  /** The 6-digit code of the n-th (1-based) message to `email`, waiting for it to arrive. */
  code(email: string, nth?: number): Promise<string>;
  mailsTo(email: string): number;
  close(): Promise<void>;
}

/** An in-process SMTP server on port 0 that keeps what it receives (no TLS, no auth). */
export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: SmtpSink['messages'] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        messages.push({
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  const to = (email: string) => messages.filter((m) => m.to.includes(email.toLowerCase()));
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    mailsTo: (email) => to(email).length,
    async code(email, nth = 1) {
      return vi.waitFor(
        () => {
          const m = to(email)[nth - 1];
          const code = m && /sign-in code is (\d{6})/.exec(m.raw)?.[1];
          if (!code) throw new Error(`no code mailed to ${email} yet`);
          return code;
        },
        { timeout: 10_000, interval: 20 },
      );
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
