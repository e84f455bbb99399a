import { SMTPServer } from 'smtp-server';
import { waitFor } from './ports.ts';

export interface ReceivedMail {
  to: string[];
  raw: string;
}

/** A local SMTP sink: the auth service sends its codes here in tests (no mailbox on the internet). */
export class Mailbox {
  private readonly server: SMTPServer;
  readonly port: number;
  readonly messages: ReceivedMail[];
  private constructor(server: SMTPServer, port: number, messages: ReceivedMail[]) {
    this.server = server;
    this.port = port;
    this.messages = messages;
  }

  static async start(): Promise<Mailbox> {
    const messages: ReceivedMail[] = [];
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
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
    const port = await new Promise<number>((resolve, reject) => {
      server.on('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const addr = server.server.address();
        resolve(typeof addr === 'object' && addr ? addr.port : 0);
      });
    });
    return new Mailbox(server, port, messages);
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  mailsTo(email: string): number {
    return this.to(email).length;
  }

  /** The 6-digit code of the n-th (1-based) mail to `email`, waiting for that mail to arrive. */
  async code(email: string, nth = 1): Promise<string> {
    const mail = await waitFor(() => this.to(email)[nth - 1], {
      timeoutMs: 10_000,
      intervalMs: 20,
      what: `mail #${nth} to ${email}`,
    });
    // Quoted-printable soft line breaks could split the code.
    const match = /\b(\d{6})\b/.exec(mail.raw.replace(/=\r?\n/g, ''));
    if (!match) throw new Error(`No 6-digit code in the mail to ${email}`);
    return match[1]!;
  }

  private to(email: string): ReceivedMail[] {
    return this.messages.filter((m) => m.to.includes(email.toLowerCase()));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
