// Every /v1 response the test suite receives through test/helpers/app.ts is checked against the
// OpenAPI document the service publishes: the status must be documented for the operation, and
// a JSON body must validate against that status' schema (JSON Schema 2020-12, the dialect of
// OpenAPI 3.1; objects are closed, so an undocumented field fails too). A mismatch throws in the
// test that received the response.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { routes } from '../../src/rest/index.ts';
import { buildOpenApi } from '../../src/rest/openapi.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

export const openApiDocument = buildOpenApi(routes, { serverUrl: 'http://127.0.0.1', version: 'test' }) as unknown as {
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, { content?: Record<string, unknown> }> }>>;
  components: { schemas: Record<string, unknown> };
};

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(openApiDocument, 'openapi.json');

const templates = Object.keys(openApiDocument.paths).map((template) => ({
  template,
  pattern: new RegExp('^' + template.replace(/\{[^}]+\}/g, '[^/]+') + '$'),
  // literal segments first: /v1/test-helpers/clock before /v1/x/{id}
  literal: template.split('/').filter((s) => !s.startsWith('{')).length,
}));
templates.sort((a, b) => b.literal - a.literal);

const compiled = new Map<string, ValidateFunction>();
const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

function validatorFor(ref: string): ValidateFunction {
  let v = compiled.get(ref);
  if (!v) {
    v = ajv.getSchema(ref);
    if (!v) throw new Error(`no schema at ${ref}`);
    compiled.set(ref, v);
  }
  return v;
}

export const responseChecks = { count: 0 };

/**
 * Checks one response. Routes the API does not have (404/405 for unknown paths) must answer
 * with the Error schema.
 */
export function checkResponse(method: string, url: string, status: number, contentType: string | null, body: unknown) {
  const { pathname } = new URL(url);
  if (!pathname.startsWith('/v1/') && pathname !== '/v1') return;
  const m = method.toLowerCase();
  const match = templates.find((t) => t.pattern.test(pathname) && openApiDocument.paths[t.template]![m]);
  const json = /application\/json/.test(contentType ?? '');
  let ref: string;
  if (!match) {
    if (status < 400) throw new Error(`${method} ${pathname} answered ${status} but the OpenAPI document has no such operation`);
    ref = 'openapi.json#/components/schemas/Error';
  } else {
    const op = openApiDocument.paths[match.template]![m]!;
    if (!op.responses[String(status)]) {
      throw new Error(`${method} ${pathname} (${op.operationId}) answered ${status}, which its OpenAPI responses do not list (${Object.keys(op.responses).join(', ')}): ${JSON.stringify(body)}`);
    }
    if (!op.responses[String(status)]!.content?.['application/json']) return;
    ref = `openapi.json#/${pointer('paths', match.template, m, 'responses', String(status), 'content', 'application/json', 'schema')}`;
  }
  if (!json) throw new Error(`${method} ${pathname} answered ${status} with ${contentType}, not JSON as documented`);
  const validate = validatorFor(ref);
  responseChecks.count++;
  if (!validate(body)) {
    throw new Error(
      `${method} ${pathname} ${status}: the body does not match its OpenAPI schema: ${ajv.errorsText(validate.errors, { separator: '; ' })}\n${JSON.stringify(body).slice(0, 2000)}`,
    );
  }
}
