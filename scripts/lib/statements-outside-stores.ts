// Finds database statements outside the store modules (issue 22: "no SQL outside stores and
// migrations"). The stores are `src/domain/<area>/store.ts`, `src/services/store.ts` and
// `src/platform/<name>.store.ts` (the platform's tables: jobs, idempotency keys, API keys, the
// clock); the data-access layer itself (src/platform/db/) and generated code are exempt. Everywhere
// else two things are refused:
//   - SQL text: a string or template literal containing a statement's keywords (upper case, as
//     this code base writes SQL; prose says "select");
//   - a statement made through Prisma: a model call (`….customer.findMany(…)`, also
//     `db['customer'].findMany`), a raw call (`$queryRaw`, `$queryRawUnsafe`, `$executeRaw`,
//     `$executeRawUnsafe`) or a transaction (`$transaction`), by name or by bracket.
// It is a lint for code written in good faith, not a sandbox: a statement assembled from pieces
// that are each innocent, or a model reached through destructuring, is not found. Tenancy does not
// rest on it (row-level security and the scoped client do, docs/architecture.md).
// `npx tsx scripts/statements-outside-stores.ts [src]` prints them; test/unit/stores.test.ts
// requires none.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

export interface Finding {
  file: string;
  line: number;
  kind: 'sql' | 'prisma';
  text: string;
}

/** A statement's keywords, upper case as this code base writes them (prose says "select"). */
const SQL = /\b(SELECT\b|INSERT\s+INTO|UPDATE\s+"?\w+"?\s+((AS\s+)?\w+\s+)?SET\b|DELETE\s+FROM|FOR\s+(NO\s+KEY\s+)?UPDATE\b|SET\s+(LOCAL|ROLE|SESSION)\b|ON\s+CONFLICT|RETURNING\s+[\w*])/;
const PRISMA_METHODS = new Set([
  'findUnique', 'findUniqueOrThrow', 'findFirst', 'findFirstOrThrow', 'findMany', 'create', 'createMany', 'createManyAndReturn',
  'update', 'updateMany', 'updateManyAndReturn', 'upsert', 'delete', 'deleteMany', 'count', 'aggregate', 'groupBy',
]);
const PRISMA_RAW = new Set(['$queryRaw', '$queryRawUnsafe', '$executeRaw', '$executeRawUnsafe', '$transaction']);

/** The Prisma client's model properties (customer, paymentMethod, …) from the schema. */
export function prismaModels(root: string): Set<string> {
  const schema = readFileSync(join(root, 'prisma', 'schema.prisma'), 'utf8');
  const models = new Set<string>();
  for (const m of schema.matchAll(/^model\s+(\w+)\s*\{/gm)) models.add(m[1]![0]!.toLowerCase() + m[1]!.slice(1));
  return models;
}

const STORE = /^src\/(domain\/[a-z-]+\/store|services\/store|platform\/[a-z-]+\.store)\.ts$/;

export function isExempt(rel: string): boolean {
  return STORE.test(rel) || rel.startsWith('src/platform/db/') || rel.startsWith('src/generated/');
}

function files(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (p.endsWith('.ts') || p.endsWith('.mts') || p.endsWith('.tsx')) out.push(p);
  }
  return out;
}

/** The name a property access or a bracket access with a string literal reaches (`a.b`, `a['b']`). */
function nameOf(n: ts.PropertyAccessExpression | ts.ElementAccessExpression): string | undefined {
  if (ts.isPropertyAccessExpression(n)) return n.name.text;
  return ts.isStringLiteralLike(n.argumentExpression) ? n.argumentExpression.text : undefined;
}

export function scanText(rel: string, text: string, models: Set<string>): Finding[] {
  const sf = ts.createSourceFile(rel, text, ts.ScriptTarget.Latest, true);
  const found: Finding[] = [];
  const at = (n: ts.Node) => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
  const visit = (n: ts.Node) => {
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) {
      if (SQL.test(n.text)) found.push({ file: rel, line: at(n), kind: 'sql', text: n.text.replace(/\s+/g, ' ').slice(0, 80) });
    } else if (ts.isTemplateExpression(n)) {
      const whole = [n.head.text, ...n.templateSpans.map((s) => s.literal.text)].join(' ? ');
      if (SQL.test(whole)) found.push({ file: rel, line: at(n), kind: 'sql', text: whole.replace(/\s+/g, ' ').slice(0, 80) });
    } else if (ts.isCallExpression(n) && (ts.isPropertyAccessExpression(n.expression) || ts.isElementAccessExpression(n.expression))) {
      const method = nameOf(n.expression);
      const target = n.expression.expression;
      const model = ts.isPropertyAccessExpression(target) || ts.isElementAccessExpression(target) ? nameOf(target) : undefined;
      if (method !== undefined && (PRISMA_RAW.has(method) || (PRISMA_METHODS.has(method) && model !== undefined && models.has(model)))) {
        found.push({ file: rel, line: at(n), kind: 'prisma', text: n.expression.getText(sf).replace(/\s+/g, '').slice(0, 80) });
      }
    } else if (ts.isTaggedTemplateExpression(n) && ts.isPropertyAccessExpression(n.tag) && PRISMA_RAW.has(n.tag.name.text)) {
      found.push({ file: rel, line: at(n), kind: 'prisma', text: n.tag.getText(sf).slice(0, 80) });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

/** Every statement outside a store under `dir` (relative to root). */
export function statementsOutsideStores(root: string, dir = 'src'): Finding[] {
  const models = prismaModels(root);
  const out: Finding[] = [];
  for (const f of files(join(root, dir))) {
    const rel = relative(root, f);
    if (isExempt(rel)) continue;
    out.push(...scanText(rel, readFileSync(f, 'utf8'), models));
  }
  return out;
}
