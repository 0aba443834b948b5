// One JSON object per line on stdout (pino). Request logs carry request_id and merchant_id.
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    level,
    base: { service: 'billing' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: ['req.headers.authorization', '*.client_secret', '*.secret'], censor: '[redacted]' },
  });
}
