// One JSON object per line on stdout (pino). Request logs carry request_id and merchant_id.
//
// Each key appears once in a line. pino writes a child's bindings and a call's fields as they
// come, so a field that a parent logger already carries (merchant_id, bound by the request once it
// is authenticated, given again by a job or an operator line run inside that request) would
// appear twice — and a line with a duplicate key is rejected or mangled by log pipelines
// (Elasticsearch refuses the document; others keep either value). So a call's field that the
// logger already carries with the same value is left out (`logMethod` below), and children are
// made with `childLogger`, which leaves out the bindings the parent already has.
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

const CHINDINGS = pino.symbols.chindingsSym;

/** Whether pino's bindings string (`,"key":value…`) carries `key` with this very value. */
function bound(chindings: string, key: string, value: unknown): boolean {
  if (value === undefined || !chindings.includes(`,"${key}":`)) return false;
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    return false;
  }
  const at = chindings.indexOf(`,"${key}":${json}`);
  if (at < 0) return false;
  const end = at + key.length + 4 + json.length;
  return end === chindings.length || chindings[end] === ',';
}

/** The fields of `obj` that `log` does not carry already with the same value (obj itself when none is). */
function withoutBound(chindings: string, obj: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(obj)) {
    if (bound(chindings, key, obj[key])) {
      out ??= { ...obj };
      delete out[key];
    }
  }
  return out ?? obj;
}

export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'billing' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    redact: { paths: ['req.headers.authorization', '*.client_secret', '*.secret'], censor: '[redacted]' },
    hooks: {
      logMethod(args, method) {
        const first = args[0] as unknown;
        if (first !== null && typeof first === 'object' && !(first instanceof Error)) {
          const chindings = (this as unknown as Record<symbol, string>)[CHINDINGS] ?? '';
          if (chindings.length > 0) (args as unknown[])[0] = withoutBound(chindings, first as Record<string, unknown>);
        }
        return method.apply(this, args);
      },
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** `log.child(bindings)` without the bindings `log` already carries with the same value (no key twice in a line). */
export function childLogger(log: Logger, bindings: Record<string, unknown>): Logger {
  const chindings = (log as unknown as Record<symbol, string>)[CHINDINGS] ?? '';
  return log.child(chindings.length > 0 ? withoutBound(chindings, bindings) : bindings);
}

/**
 * A URL as it may be logged or shown: its host, port and path, after its scheme unless
 * `scheme: false` — never the user name, password, query string or fragment a URL can carry (a
 * database password, a collector's `?api_key=`); null when the text is not a URL.
 */
export function urlWithoutSecrets(url: string, opts: { scheme?: boolean } = {}): string | null {
  try {
    const u = new URL(url);
    return `${opts.scheme === false ? '' : `${u.protocol}//`}${u.host}${u.pathname}`;
  } catch {
    return null;
  }
}
