// Sending e-mail: an SMTP transport (nodemailer) for SMTP_URL, one per process and configuration.
// Callers never send inside a database transaction (a slow SMTP server must not hold a connection
// or a lock): the e-mail job renders and records the message, then sends.
import nodemailer from 'nodemailer';
import type { Config } from './config.ts';

export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** extra headers (e.g. the event the message is about) */
  headers?: Record<string, string>;
}

export interface Mailer {
  /** Sends one message; resolves with the server's message id once the server accepted it, throws otherwise. */
  send(mail: OutgoingMail): Promise<{ messageId: string; response: string }>;
}

const mailers = new WeakMap<Config, Mailer | null>();

/** The process's mailer for `config`; null when SMTP_URL is not set. */
export function mailerFor(config: Config): Mailer | null {
  if (mailers.has(config)) return mailers.get(config)!;
  let mailer: Mailer | null = null;
  if (config.SMTP_URL) {
    const transport = nodemailer.createTransport({
      url: config.SMTP_URL,
      // A server that does not answer is a failed attempt, retried by the job (not a job hung for minutes).
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    } as Parameters<typeof nodemailer.createTransport>[0]);
    mailer = {
      async send(mail) {
        const info = await transport.sendMail(mail);
        return { messageId: String(info.messageId ?? ''), response: String(info.response ?? '') };
      },
    };
  }
  mailers.set(config, mailer);
  return mailer;
}
