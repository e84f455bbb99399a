import { SMTPServer } from 'smtp-server';
import { waitFor } from './ports';

export interface ReceivedMail {
  to: string[];
  raw: string;
}

/** A local SMTP sink: the auth service sends its codes here in tests (no mailbox on the internet). */
export class Mailbox {
  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
    readonly messages: ReceivedMail[],
  ) {}

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

  /** The newest 6-digit code mailed to `email`, waiting until `count` mails arrived for it. */
  async codeFor(email: string, count = 1): Promise<string> {
    const mails = await waitFor(
      () => {
        const m = this.messages.filter((x) => x.to.includes(email.toLowerCase()));
        return m.length >= count ? m : undefined;
      },
      { what: `mail #${count} to ${email}` },
    );
    const match = /\b(\d{6})\b/.exec(mails[mails.length - 1]!.raw.replace(/=\r?\n/g, ''));
    if (!match) throw new Error(`No 6-digit code in the mail to ${email}`);
    return match[1]!;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
