import { describe, expect, it } from 'vitest';
import { getIntrospectionQuery } from 'graphql';
import { documentNesting } from '../../src/graphql/document-guard.ts';

describe('documentNesting', () => {
  it('counts braces, brackets and parentheses', () => {
    expect(documentNesting('{ a }')).toBe(1);
    expect(documentNesting('{ a(x: [[1]]) { b } }')).toBe(4);
    expect(documentNesting('query Q($v: [Int!]) { a }')).toBe(2);
  });
  it('skips strings, escaped quotes, block strings and comments', () => {
    expect(documentNesting('{ a(x: "[[[\\"[[[") }')).toBe(2);
    expect(documentNesting('{ a(x: """ [[[ \\""" [[[ """) }')).toBe(2);
    expect(documentNesting('# {{{{{{\n{ a }')).toBe(1);
  });
  it('an unterminated string ends the scan without throwing', () => {
    expect(documentNesting('{ a(x: "[[[')).toBe(2);
    expect(documentNesting('{ a(x: """[[[')).toBe(2);
  });
  it('stops early past the limit', () => {
    expect(documentNesting('['.repeat(1_000_000), 10)).toBe(11);
  });
  it('the full introspection query nests far below the limit', () => {
    expect(documentNesting(getIntrospectionQuery({ descriptions: true, inputValueDeprecation: true, oneOf: true }))).toBeLessThan(40);
  });
});
