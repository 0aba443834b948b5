// The error model. Domain code throws these; REST maps them to the documented JSON body and
// status, GraphQL returns them as typed union members (plugin-errors). Anything else that is
// thrown is an unexpected failure: logged with the request id, answered as a masked 500.

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'wallet_error'
  | 'card_error'
  | 'state_error'
  | 'idempotency_error'
  | 'rate_limit_error'
  | 'api_error';

export abstract class AppError extends Error {
  abstract readonly status: number;
  abstract readonly type: ErrorType;
  readonly code: string;
  /** The offending field, in the REST (snake_case) spelling, dotted for nested fields. */
  readonly param: string | null;
  /** Extra headers for REST (Retry-After, WWW-Authenticate, Allow). */
  headers: Record<string, string> = {};

  constructor(code: string, message: string, param: string | null = null) {
    super(message);
    this.code = code;
    this.param = param;
  }
}

/** 400: parameter_missing, parameter_invalid, parameter_unknown, invalid_json, amount_too_large … */
export class ValidationError extends AppError {
  readonly status: number = 400;
  readonly type = 'invalid_request_error' as const;
}

/** 404 resource_missing. Also used for other merchants' ids: existence is never revealed. */
export class NotFoundError extends AppError {
  readonly status = 404;
  readonly type = 'invalid_request_error' as const;
  constructor(resource: string, id: string | null, param: string | null = 'id') {
    super('resource_missing', id ? `No such ${resource}: '${id}'.` : `No such ${resource}.`, param);
  }
}

/** 409 for an operation that the record's current state does not allow. */
export class StateError extends AppError {
  readonly status = 409;
  readonly type = 'state_error' as const;
}

/** 409 idempotency_key_reused / idempotency_key_in_use. */
export class IdempotencyError extends AppError {
  readonly status = 409;
  readonly type = 'idempotency_error' as const;
}

/** 402 insufficient_balance; carries the balance that was available. */
export class InsufficientBalanceError extends AppError {
  readonly status = 402;
  readonly type = 'wallet_error' as const;
  constructor(
    message: string,
    readonly balance: bigint,
    param: string | null = 'amount',
  ) {
    super('insufficient_balance', message, param);
  }
}

/**
 * 402: a charge asked for now failed (POST /v1/invoices/:id/pay). `code` and the message are the
 * failure's (card_declined, insufficient_funds, no_payment_method …); it names the invoice and
 * carries the invoice's `last_payment_error`.
 */
export class PaymentFailedError extends AppError {
  readonly status = 402;
  readonly type = 'card_error' as const;
  constructor(
    readonly invoiceId: string,
    readonly lastPaymentError: { code: string; message: string },
  ) {
    super(lastPaymentError.code, lastPaymentError.message, null);
  }
}

/** 401 unauthorized (sends WWW-Authenticate). */
export class AuthenticationError extends AppError {
  readonly status = 401;
  readonly type = 'authentication_error' as const;
  constructor(message = 'Invalid or missing API credentials. Use HTTP Basic auth with your client id and secret.') {
    super('unauthorized', message, null);
    this.headers = { 'WWW-Authenticate': 'Basic realm="billing", charset="UTF-8"' };
  }
}

/** Protocol-level request errors that only REST produces (404 route, 405, 413, 415). */
export class HttpError extends AppError {
  readonly type = 'invalid_request_error' as const;
  constructor(
    readonly status: number,
    code: string,
    message: string,
    param: string | null = null,
  ) {
    super(code, message, param);
  }
}

export class RateLimitError extends AppError {
  readonly status = 429;
  readonly type = 'rate_limit_error' as const;
  constructor(retryAfterSeconds: number) {
    super('rate_limited', 'Too many requests. Retry after the number of seconds in Retry-After.');
    this.headers = { 'Retry-After': String(retryAfterSeconds) };
  }
}

/** 503: the database cannot be reached. The process stays up and recovers by itself. */
export class ServiceUnavailableError extends AppError {
  readonly status = 503;
  readonly type = 'api_error' as const;
  constructor(message = 'The service is temporarily unavailable (the database cannot be reached or is saturated). Retry shortly.') {
    super('service_unavailable', message);
    this.headers = { 'Retry-After': '5' };
  }
}

export class InternalError extends AppError {
  readonly status = 500;
  readonly type = 'api_error' as const;
  constructor() {
    super('internal_error', 'An internal error occurred. The request id identifies it in our logs.');
  }
}

const DB_DOWN_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', '57P01', '57P03', '08000', '08001', '08003', '08006', 'P1001', 'P1002', 'P1017', 'P2024']);

/**
 * True when the error chain says the database is unreachable (connection refused, reset …) or
 * no connection came free in time (every pooled connection busy): both answer 503 with
 * Retry-After, and nothing was written.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  let e: any = err;
  for (let depth = 0; e && depth < 6; depth++) {
    if (typeof e.code === 'string' && DB_DOWN_CODES.has(e.code)) return true;
    const kind = e.cause?.kind ?? e.kind;
    if (kind === 'DatabaseNotReachable' || kind === 'ConnectionClosed' || kind === 'SocketTimeout' || kind === 'TooManyConnections') return true;
    if (typeof e.message === 'string' && /Connection terminated|connect ECONNREFUSED|Can't reach database|Timed out fetching a new connection|timeout exceeded when trying to connect/i.test(e.message)) return true;
    if (Array.isArray(e.errors) && e.errors.some((x: unknown) => isDatabaseUnavailable(x))) return true;
    e = e.cause;
  }
  return false;
}

/** The PostgreSQL SQLSTATE (e.g. 23505) behind an error from Prisma's driver adapters or pg, if any. */
export function pgCode(err: unknown): string | null {
  let e: any = err;
  for (let depth = 0; e && depth < 6; depth++) {
    const adapter = e.meta?.driverAdapterError?.cause ?? (e.name === 'DriverAdapterError' ? e.cause : undefined);
    if (typeof adapter?.originalCode === 'string') return adapter.originalCode;
    if (typeof e.originalCode === 'string') return e.originalCode;
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && !/^P\d{4}$/.test(e.code)) return e.code;
    e = e.cause;
  }
  return null;
}

/** The constraint or index a unique violation names, when the error says. */
export function violatedConstraint(err: unknown): string | null {
  let e: any = err;
  for (let depth = 0; e && depth < 6; depth++) {
    const cause = e.meta?.driverAdapterError?.cause ?? e.cause;
    const c = cause?.constraint;
    if (c && typeof c === 'object') return c.index ?? (Array.isArray(c.fields) ? c.fields.join(',') : null);
    if (typeof e.constraint === 'string') return e.constraint;
    e = e.cause;
  }
  return null;
}

/** 55P03: a NOWAIT lock was not available. */
export const isLockNotAvailable = (err: unknown) => pgCode(err) === '55P03';
/**
 * Thrown by domain code that finds, once it holds a lock, that it would have to wait for another
 * lock in the wrong order (a deadlock waiting to happen): its transaction is rolled back and run
 * again, as after a deadlock, without the wait.
 */
export class TransactionConflict extends Error {
  override name = 'TransactionConflict';
}
/** 40P01 deadlock, 40001 serialization failure or a TransactionConflict: the transaction may simply be run again. */
export const isRetryableConflict = (err: unknown) =>
  err instanceof TransactionConflict ||
  ['40P01', '40001'].includes(pgCode(err) ?? '') ||
  (err as { code?: unknown } | null)?.code === 'P2034';
export const isUniqueViolation = (err: unknown) => pgCode(err) === '23505';

/**
 * Normalises anything thrown into an AppError; unknown errors become a masked 500 (or 503). A
 * PostgreSQL data exception (SQLSTATE class 22: a value out of range, text it cannot store …) is
 * input the validation layer missed: a 400, never a 500 (onDataException lets the caller log it).
 */
export function toAppError(err: unknown, onDataException?: (err: unknown) => void): AppError {
  if (err instanceof AppError) return err;
  if (isDatabaseUnavailable(err)) return new ServiceUnavailableError();
  if (pgCode(err)?.startsWith('22')) {
    onDataException?.(err);
    return new ValidationError('parameter_invalid', 'A value in the request is out of range or is not text the database can store.', null);
  }
  return new InternalError();
}

export function errorBody(err: AppError, requestId: string) {
  const extra =
    err instanceof InsufficientBalanceError
      ? { balance: Number(err.balance) }
      : err instanceof PaymentFailedError
        ? { invoice_id: err.invoiceId, last_payment_error: err.lastPaymentError }
        : {};
  return {
    error: { type: err.type, code: err.code, message: err.message, param: err.param, ...extra, request_id: requestId },
  };
}
