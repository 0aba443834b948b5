// Expected failures are data: every mutation returns a union of its success type and these
// error types, which all implement the `Error` interface (code, message, param) and use the
// same codes as REST. Unexpected errors are masked by Yoga.
import {
  AppError,
  IdempotencyError,
  InsufficientBalanceError,
  NotFoundError,
  StateError,
  ValidationError,
} from '../platform/errors.ts';
import { builder } from './builder.ts';

/** REST spells params snake_case; GraphQL input fields are camelCase. */
export function camelParam(param: string | null): string | null {
  return param ? param.replace(/_([a-z])/g, (_, ch: string) => ch.toUpperCase()) : null;
}

export const ErrorInterface = builder.interfaceRef<AppError>('Error').implement({
  description: 'A failure the caller can act on. `code` is the same code the REST API returns.',
  fields: (t) => ({
    code: t.exposeString('code', { description: 'Machine-readable code, e.g. parameter_invalid, resource_missing.' }),
    message: t.exposeString('message', { description: 'Human-readable explanation.' }),
    param: t.string({
      nullable: true,
      description: 'The input field the error is about (camelCase, dotted for nested fields).',
      resolve: (e) => camelParam(e.param),
    }),
  }),
});

builder.objectType(ValidationError, {
  name: 'ValidationError',
  description: 'An input is missing, unknown or invalid (parameter_missing, parameter_invalid, amount_too_large …).',
  interfaces: [ErrorInterface],
  isTypeOf: (e) => e instanceof ValidationError,
  fields: () => ({}),
});

builder.objectType(NotFoundError, {
  name: 'NotFoundError',
  description: 'No such record for this merchant (resource_missing).',
  interfaces: [ErrorInterface],
  isTypeOf: (e) => e instanceof NotFoundError,
  fields: () => ({}),
});

builder.objectType(StateError, {
  name: 'StateError',
  description: "The record's current state does not allow the operation.",
  interfaces: [ErrorInterface],
  isTypeOf: (e) => e instanceof StateError,
  fields: () => ({}),
});

builder.objectType(IdempotencyError, {
  name: 'IdempotencyError',
  description: 'The idempotencyKey was used with other input (idempotency_key_reused) or is still in use (idempotency_key_in_use).',
  interfaces: [ErrorInterface],
  isTypeOf: (e) => e instanceof IdempotencyError,
  fields: () => ({}),
});

builder.objectType(InsufficientBalanceError, {
  name: 'InsufficientBalanceError',
  description: 'The wallet balance does not cover the debit.',
  interfaces: [ErrorInterface],
  isTypeOf: (e) => e instanceof InsufficientBalanceError,
  fields: (t) => ({
    balance: t.field({ type: 'Money', description: 'The balance that was available.', resolve: (e) => e.balance }),
  }),
});

/** Error types every mutation can return. */
export const COMMON_ERRORS = [ValidationError, IdempotencyError];
