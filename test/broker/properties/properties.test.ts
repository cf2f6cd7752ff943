import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseOverrides, parseProperties, parsePropertiesEntries } from '../../../broker/properties/properties.js';
import { ConfigError } from '../../../metadata/config-schema.js';

function props(text: string): Record<string, string> {
  return Object.fromEntries(parseProperties(text));
}

describe('properties parser (java.util.Properties.load)', () => {
  it('accepts =, : and whitespace as separators, trimming around them', () => {
    assert.deepEqual(props('a=1\nb: 2\nc 3\n  d   =   4  \ne\t:\t5'), { a: '1', b: '2', c: '3', d: '4  ', e: '5' });
  });

  it('skips # and ! comments and blank lines', () => {
    assert.deepEqual(props('# comment\n! other\n\n   \n  # indented comment\nx=1'), { x: '1' });
  });

  it('keeps # inside a value', () => {
    assert.deepEqual(props('x=a#b'), { x: 'a#b' });
  });

  it('joins continuation lines and drops the leading blanks of the next line', () => {
    assert.deepEqual(props('listeners=PLAINTEXT://a:1,\\\n      PLAINTEXT://b:2\nnext=x'), {
      listeners: 'PLAINTEXT://a:1,PLAINTEXT://b:2',
      next: 'x',
    });
  });

  it('an even number of trailing backslashes is an escaped backslash, not a continuation', () => {
    assert.deepEqual(props('path=C:\\\\dir\\\\\nnext=1'), { path: 'C:\\dir\\', next: '1' });
  });

  it('a comment line ending in a backslash does not continue', () => {
    assert.deepEqual(props('# comment \\\nx=1'), { x: '1' });
  });

  it('decodes escapes: \\t \\n \\r \\f, \\uXXXX and escaped separators in keys', () => {
    assert.deepEqual(props('k\\=ey\\:x=v\\tw\\nz\\u0041\\q'), { 'k=ey:x': 'v\tw\nzAq' });
    assert.deepEqual(props('a\\ b=c'), { 'a b': 'c' });
  });

  it('a malformed \\u escape is an error', () => {
    assert.throws(() => parseProperties('x=\\u12'), ConfigError);
  });

  it('handles CRLF and CR line ends', () => {
    assert.deepEqual(props('a=1\r\nb=2\rc=3'), { a: '1', b: '2', c: '3' });
  });

  it('a key without value has an empty value', () => {
    assert.deepEqual(props('lonely\nalso=\n'), { lonely: '', also: '' });
  });

  it('the last occurrence of a key wins; entries keep line numbers', () => {
    assert.deepEqual(props('a=1\na=2'), { a: '2' });
    const entries = parsePropertiesEntries('# c\n\na=1\nb=2\\\n  3');
    assert.deepEqual(entries.map((e) => [e.key, e.value, e.line]), [['a', '1', 3], ['b', '23', 4]]);
  });

  it('a trailing continuation at end of input is dropped', () => {
    assert.deepEqual(props('a=1\\'), { a: '1' });
  });
});

describe('--override key=value', () => {
  it('splits at the first =', () => {
    assert.deepEqual(Object.fromEntries(parseOverrides(['a=b=c', 'x=', ' y =1'])), { a: 'b=c', x: '', y: '1' });
  });

  it('refuses an argument without = or with an empty key', () => {
    assert.throws(() => parseOverrides(['novalue']), /Invalid --override 'novalue'/);
    assert.throws(() => parseOverrides(['=1']), ConfigError);
  });
});
