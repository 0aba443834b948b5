// One JSON object per line on stdout (pino). Request logs carry request_id and merchant_id.
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'billing' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    redact: { paths: ['req.headers.authorization', '*.client_secret', '*.secret'], censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
