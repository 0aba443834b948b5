// Input validation with zod. One schema per input serves three purposes: REST validation,
// the OpenAPI document (z.toJSONSchema) and the domain's own check of GraphQL input.
// Schemas use the REST (snake_case) field names; the first problem becomes a ValidationError
// with the documented code and the offending parameter.
import { z } from 'zod';
import { MAX_AMOUNT, MIN_AMOUNT, normalizeCurrency } from './money.ts';
import { exampleId, kindOfId, type IdKind } from './ids.ts';
import { ValidationError } from './errors.ts';

export { z };

function at(input: unknown, path: PropertyKey[]): unknown {
  let v: any = input;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = v[p as any];
  }
  return v;
}

/**
 * The one spelling of a parameter's path in an error's `param` and message, on every surface
 * (docs/conventions.md, "Errors"): Stripe's — the top-level field, then each nested key or index
 * in brackets: `lines[0][amount]`, `metadata[order_id]`, `customer[email]`. Every `param` naming a
 * nested field is made here (zod issues, the input text check, the domain's own checks).
 */
export function paramPath(path: readonly PropertyKey[], prefix?: string | null): string | null {
  const parts = [...(prefix ? [prefix] : []), ...path.map(String)];
  if (parts.length === 0) return null;
  return parts[0] + parts.slice(1).map((p) => `[${p}]`).join('');
}

/** The segments of a param made by paramPath (`lines[0][amount]` → lines, 0, amount). */
export function paramSegments(param: string): string[] {
  const m = /^([^[]*)((?:\[[^\]]*\])*)$/.exec(param);
  if (!m) return [param];
  return [m[1]!, ...[...m[2]!.matchAll(/\[([^\]]*)\]/g)].map((x) => x[1]!)];
}

const joinPath = (path: PropertyKey[], prefix?: string) => paramPath(path, prefix);

/** Converts the first zod issue into the documented error (unknown fields first, then missing, then invalid). */
export function issueToError(issues: z.core.$ZodIssue[], input: unknown, prefix?: string): ValidationError {
  const unknown = issues.find((i) => i.code === 'unrecognized_keys') as z.core.$ZodIssueUnrecognizedKeys | undefined;
  if (unknown) {
    const param = joinPath([...unknown.path, unknown.keys[0]!], prefix)!;
    return new ValidationError('parameter_unknown', `Received unknown parameter: ${param}.`, param);
  }
  // A required field that is absent: zod says invalid_type for most, invalid_value for an enum
  // or literal, invalid_union for a union — each is "missing" when nothing was sent there.
  const missing = issues.find((i) => (i.code === 'invalid_type' || i.code === 'invalid_value' || i.code === 'invalid_union') && at(input, i.path) === undefined);
  if (missing) {
    const param = joinPath(missing.path, prefix);
    return new ValidationError('parameter_missing', `Missing required parameter: ${param}.`, param);
  }
  // A coded issue (amount_too_large …) names the problem better than a generic one on the same
  // field (1e20 is also outside the safe integers).
  const first =
    issues.find((i) => i.code === 'custom' && (i.params as any)?.code && i.path.join('.') === issues[0]!.path.join('.')) ?? issues[0]!;
  const param = joinPath(first.path, prefix);
  const code = (first.code === 'custom' && (first.params as any)?.code) || 'parameter_invalid';
  const message = first.message.endsWith('.') ? first.message : `${first.message}.`;
  return new ValidationError(code, param ? `Invalid ${param}: ${message}` : message, param);
}

const quote = (v: unknown) => (typeof v === 'string' ? `'${v}'` : String(v));
const SIZED: Record<string, [one: string, many: string]> = { string: ['character', 'characters'], array: ['item', 'items'], set: ['item', 'items'], map: ['entry', 'entries'], file: ['byte', 'bytes'] };
const sized = (n: number | bigint, origin: string) => {
  const unit = SIZED[origin];
  return unit ? `${n} ${Number(n) === 1 ? unit[0] : unit[1]}` : String(n);
};
const FORMATS: Record<string, string> = { email: 'a valid email address', url: 'a valid URL', uuid: 'a UUID', datetime: 'an ISO 8601 date-time', date: 'an ISO 8601 date', e164: 'an E.164 phone number' };
const TYPES: Record<string, string> = { string: 'a string', number: 'a number', int: 'an integer', boolean: 'true or false', array: 'an array', object: 'an object', bigint: 'an integer', date: 'a date' };

/**
 * The project's words for the checks a schema states without its own message (a plain `.max(254)`,
 * an enum, a type): "must be at most 254 characters", "must be one of 'a', 'b'", not zod's default
 * English ("Too big: expected string to have <=254 characters"). Every input — REST's path, query
 * and body, GraphQL arguments and inputs (listArgs, domainInput → the domain's parse) — is parsed
 * by `parse` below with this map, so both surfaces say the same; a message a schema gives itself
 * (`{ error: 'must be …' }`) wins over it. issueToError adds "Invalid <param>: ".
 */
export function issueMessage(issue: z.core.$ZodRawIssue): string | undefined {
  const i = issue as z.core.$ZodRawIssue & Record<string, any>;
  switch (i.code) {
    case 'invalid_type':
      return `must be ${TYPES[i.expected] ?? i.expected}`;
    case 'invalid_value':
      // in alphabetical order: GraphQL's enum types are sorted, and a value outside one gets the same words (yoga.ts)
      return i.values.length === 1 ? `must be ${quote(i.values[0])}` : `must be one of ${i.values.map(quote).sort().join(', ')}`;
    case 'too_big': {
      // a string "must be at most 254 characters", a list "must have at most 8 items", a number "must be at most 100"
      const n = sized(i.maximum, i.origin);
      const verb = i.origin in SIZED && i.origin !== 'string' ? 'must have' : 'must be';
      if (i.exact) return `${verb} exactly ${n}`;
      return i.inclusive ? `${verb} at most ${n}` : i.origin in SIZED ? `${verb} fewer than ${n}` : `must be less than ${n}`;
    }
    case 'too_small': {
      const n = sized(i.minimum, i.origin);
      const verb = i.origin in SIZED && i.origin !== 'string' ? 'must have' : 'must be';
      if (i.exact) return `${verb} exactly ${n}`;
      if (i.origin in SIZED && Number(i.minimum) === 1 && i.inclusive) return 'must not be empty';
      return i.inclusive ? `${verb} at least ${n}` : `${verb} more than ${n}`;
    }
    case 'invalid_format':
      if (i.format === 'starts_with') return `must start with '${i.prefix}'`;
      if (i.format === 'ends_with') return `must end with '${i.suffix}'`;
      if (i.format === 'includes') return `must include '${i.includes}'`;
      if (i.format === 'regex') return 'is not in the expected format';
      return `must be ${FORMATS[i.format] ?? `a valid ${i.format}`}`;
    case 'not_multiple_of':
      return `must be a multiple of ${i.divisor}`;
    case 'invalid_key':
      return 'has a key that is not valid';
    case 'invalid_element':
      return 'has a value that is not valid';
    case 'invalid_union':
      return 'is not one of the accepted forms';
    default:
      return undefined; // unrecognized_keys: issueToError words it; custom: its own message
  }
}

/** Parses or throws the documented ValidationError. */
export function parse<S extends z.ZodType>(schema: S, input: unknown, prefix?: string): z.output<S> {
  // Parsed without the error map first: passing one to safeParse costs ~1 µs a parse even when the
  // input is valid (measured with zod 4.6: an id's object 0.10 → 1.50 µs, a customer body 0.27 →
  // 1.58), so the map's words are asked for only when there is an error to word (parsing is pure:
  // the second parse finds the same issues).
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const worded = schema.safeParse(input, { error: issueMessage });
  throw issueToError((worded.success ? r : worded).error!.issues, input, prefix);
}

// ---------------------------------------------------------------- common field schemas

export const email = z
  .string()
  .trim()
  .max(254, { error: 'must be at most 254 characters' })
  .pipe(z.email({ error: 'must be a valid email address' }))
  .meta({ format: 'email', example: 'jane@example.com' });

export const phone = z
  .string()
  .regex(/^\+[1-9][0-9]{6,14}$/, { error: 'must be an E.164 phone number such as +256700000001' })
  .meta({ example: '+256700000001' });

/** The languages of the hosted pages and customer e-mails. */
export const LOCALES = ['en', 'fr'] as const;
export type Locale = (typeof LOCALES)[number];
export const locale = z.enum(LOCALES);

export const currency = z
  .string()
  .transform((v, ctx) => {
    const c = normalizeCurrency(v);
    if (c === null) {
      ctx.addIssue({ code: 'custom', message: `'${v}' is not a supported ISO 4217 currency code` });
      return z.NEVER;
    }
    return c;
  })
  .meta({ description: 'ISO 4217 currency code, any case; returned upper-case.', example: 'USD' });

export function amount(min = MIN_AMOUNT) {
  return z
    .number({ error: 'must be an integer amount in the smallest currency unit' })
    .int({ error: 'must be an integer amount in the smallest currency unit' })
    .superRefine((v, ctx) => {
      if (v > MAX_AMOUNT) ctx.addIssue({ code: 'custom', params: { code: 'amount_too_large' }, message: `must be at most ${MAX_AMOUNT}` });
      else if (v < min) ctx.addIssue({ code: 'custom', message: `must be at least ${min}` });
    })
    .meta({ description: 'Integer amount in the smallest currency unit.', example: 1000 });
}

/**
 * Metadata keys that name a JavaScript object's own machinery. `__proto__` would be dropped by the
 * parse (it is not an own data key once in an object) and the others could shadow what code reads
 * from the object: refused (400 parameter_invalid, param `metadata[__proto__]`), never dropped.
 */
export const RESERVED_METADATA_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];

const metadataRecord = z
  .record(
    z.string().min(1, { error: 'keys must not be empty' }).max(40, { error: 'keys must be at most 40 characters' }),
    z.string({ error: 'values must be strings' }).max(500, { error: 'values must be at most 500 characters' }),
  )
  .superRefine((v, ctx) => {
    if (Object.keys(v).length > 50) ctx.addIssue({ code: 'custom', message: 'must have at most 50 keys' });
  });

export const metadata = z
  .preprocess((v, ctx) => {
    // Before the record's parse, which would silently leave `__proto__` out.
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const key = RESERVED_METADATA_KEYS.find((k) => Object.prototype.hasOwnProperty.call(v, k));
      if (key !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: `the key ${key} is reserved`, input: v });
    }
    return v;
  }, metadataRecord)
  .meta({
    description: `Up to 50 string key-value pairs (keys ≤ 40 characters, values ≤ 500; the keys ${RESERVED_METADATA_KEYS.join(', ')} are refused).`,
    example: { order_id: '6735' },
  }) as unknown as typeof metadataRecord;

export const httpUrl = z
  .string()
  .max(2048, { error: 'must be at most 2048 characters' })
  .pipe(z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' }))
  .meta({ format: 'uri', example: 'https://shop.example.com/thanks' });

/** An id of the given kind. A malformed id is a 404 (not a 400) at lookup time, as Stripe does; here it only must be a string. */
export function idOf(kind: IdKind) {
  return z.string().min(1).max(64).meta({ example: exampleId(kind) });
}

export function isIdOf(kind: IdKind, id: string): boolean {
  return kindOfId(id) === kind;
}

// ---------------------------------------------------------------- text and timestamps, for every input

/** Deepest nesting of objects and arrays accepted anywhere in an input (bodies, GraphQL variables). */
export const MAX_INPUT_DEPTH = 32;

// NUL cannot be stored by PostgreSQL (text or jsonb); a lone UTF-16 surrogate is not text at all.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when the string holds a character PostgreSQL cannot store (NUL, a lone surrogate). */
export function hasUnstorableText(v: string): boolean {
  return UNSTORABLE.test(v);
}

/**
 * The one check every input goes through before anything else (REST path, query and body, GraphQL
 * variables and literals): no string or key may hold NUL or a lone surrogate, and nothing may nest
 * deeper than MAX_INPUT_DEPTH. Throws parameter_invalid naming the parameter (paramPath's spelling). Iterative, so
 * no input can exhaust the stack.
 */
export function checkInputText(value: unknown, root: string | null = null): void {
  const stack: [unknown, string | null, number][] = [[value, root, 0]];
  while (stack.length > 0) {
    const [v, path, depth] = stack.pop()!;
    if (typeof v === 'string') {
      if (hasUnstorableText(v)) throw unstorableTextError(path);
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= MAX_INPUT_DEPTH) {
      throw new ValidationError('parameter_invalid', `Invalid ${path ?? 'input'}: nested more than ${MAX_INPUT_DEPTH} levels deep.`, path);
    }
    const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
    for (const [k, x] of entries) {
      if (hasUnstorableText(k)) throw unstorableTextError(path);
      stack.push([x, path ? paramPath([k], path) : k, depth + 1]);
    }
  }
}

export function unstorableTextError(param: string | null): ValidationError {
  return new ValidationError(
    'parameter_invalid',
    `Invalid ${param ?? 'input'}: must not contain NUL characters or unpaired UTF-16 surrogates.`,
    param,
  );
}

const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
export const MIN_TIMESTAMP = Date.UTC(1970, 0, 1);
export const MAX_TIMESTAMP = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
export const TIMESTAMP_FORMAT = 'must be an ISO 8601 timestamp such as 2026-01-31T12:00:00Z';
export const TIMESTAMP_RANGE = 'must be between 1970-01-01 and 9999-12-31';

/**
 * Parses an ISO 8601 date or date-time strictly: the day must exist in its month (2030-02-30 is
 * refused, not read as March 2), hours < 24, minutes and seconds < 60; without an offset the time
 * is UTC. Returns the reason when it cannot.
 */
export function parseTimestamp(v: string): Date | { error: string } {
  const m = ISO_8601.exec(v);
  if (!m) return { error: TIMESTAMP_FORMAT };
  const [y, mo, d, h = 0, mi = 0, sec = 0] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((x) => (x === undefined ? undefined : Number(x))) as number[];
  const daysInMonth = mo! >= 1 && mo! <= 12 ? new Date(Date.UTC(y!, mo!, 0)).getUTCDate() : 0;
  if (d! < 1 || d! > daysInMonth || h > 23 || mi > 59 || sec > 59) return { error: TIMESTAMP_FORMAT };
  let offsetMin = 0;
  const zone = m[8];
  if (zone && zone !== 'Z') {
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
    if (Number(z[2]) > 23 || Number(z[3]) > 59) return { error: TIMESTAMP_FORMAT };
    offsetMin = (z[1] === '-' ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3]));
  }
  const ms = m[7] ? Math.floor(Number(m[7]) * 1000) : 0;
  const date = new Date(Date.UTC(y!, mo! - 1, d!, h, mi, sec, ms) - offsetMin * 60_000);
  // Date.UTC maps years 0..99 to 1900..1999; the range check below refuses those anyway.
  if (y! < 1000 || date.getTime() < MIN_TIMESTAMP || date.getTime() > MAX_TIMESTAMP) return { error: TIMESTAMP_RANGE };
  return date;
}

export const timestamp = z
  .string()
  .transform((v, ctx) => {
    const r = parseTimestamp(v);
    if (r instanceof Date) return r;
    ctx.addIssue({ code: 'custom', message: r.error });
    return z.NEVER;
  })
  .meta({ format: 'date-time', example: '2026-01-31T12:00:00Z' });

export const limit = z
  .string()
  .regex(/^[0-9]{1,3}$/, { error: 'must be an integer between 1 and 100' })
  .transform(Number)
  .pipe(z.number().int().min(1, { error: 'must be an integer between 1 and 100' }).max(100, { error: 'must be an integer between 1 and 100' }))
  .meta({ description: 'Page size, 1 to 100 (default 20).' });

/**
 * JSON Schemas the OpenAPI document shows instead of the one zod derives, for values that arrive
 * as query strings but mean numbers (a generated client should send `limit: 20`, not "20").
 */
export const openApiOverrides = new Map<z.ZodType, Record<string, unknown>>([
  [limit, { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100 (default 20).' }],
]);

export const cursor = z.string().min(1).max(200).meta({ description: 'The next_cursor of the previous page.' });

/** Query parameters shared by every list endpoint. */
export const listQuery = { limit: limit.optional(), after: cursor.optional() };

// ---------------------------------------------------------------- free text shown to people

/**
 * What merchant free text may not hold — the one rule for every field that reaches a PDF, an e-mail
 * or a page (names, descriptions, memos): the C0 control characters but tab and line feed (so CR,
 * ESC, BEL …), DEL and the C1 controls, and the bidirectional embeddings, overrides and isolates
 * (U+202A–U+202E, U+2066–U+2069), which make text display otherwise than it is stored (an invoice
 * line reading backwards, a name hiding what follows). NUL and lone surrogates are refused earlier
 * for every input (checkInputText).
 */
const UNSAFE_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
/** The same rule as a JSON Schema pattern (the OpenAPI document shows it on every free-text field). */
const UNSAFE_TEXT_PATTERN = '^[^\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069]*$';
export const UNSAFE_TEXT_MESSAGE = 'must not contain control characters (other than tab and line feed) or bidirectional override characters';

/** True when the text holds a character free text may not (UNSAFE_TEXT). */
export function hasUnsafeText(v: string): boolean {
  return UNSAFE_TEXT.test(v);
}

/**
 * A free-text field shown to people (docs/conventions.md, "Free text"): trimmed, at most `max`
 * characters, not empty unless `allowEmpty`, and without the characters UNSAFE_TEXT names —
 * refused with 400 parameter_invalid on the field, as any bad value.
 */
export function freeText(max: number, opts: { allowEmpty?: boolean } = {}) {
  const base = z.string().trim();
  return (opts.allowEmpty ? base : base.min(1, { error: 'must not be empty' }))
    .max(max, { error: `must be at most ${max} characters` })
    .refine((v) => !hasUnsafeText(v), { error: UNSAFE_TEXT_MESSAGE })
    .meta({ pattern: UNSAFE_TEXT_PATTERN });
}

// ---------------------------------------------------------------- search

/**
 * A list's `search` parameter: 1 to 100 characters once trimmed (what it matches is the list's own
 * rule, said in `description`: plans, coupons, tax rates).
 */
export function searchParam(description: string, example: string) {
  return z
    .string()
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(100, { error: 'must be at most 100 characters' })
    .meta({ description, example });
}

/**
 * The words of a search (split at white space, distinct, at most 8), each made plain text for a
 * LIKE pattern (Prisma's `contains`): %, _ and the escape character itself match only themselves.
 */
export function searchWords(search: string): string[] {
  return [...new Set(search.split(/\s+/u).filter(Boolean))].slice(0, 8).map((w) => w.replace(/[\\%_]/g, (c) => `\\${c}`));
}
