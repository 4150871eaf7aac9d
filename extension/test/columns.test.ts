import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { codePointColumn, utf16Column } from '../src/columns';

test('ASCII columns are the same both ways', () => {
  assert.equal(codePointColumn('hello', 3), 3);
  assert.equal(utf16Column('hello', 3), 3);
});

test('an astral character is two UTF-16 units but one code point', () => {
  const line = 'a😀b';
  assert.equal(codePointColumn(line, 3), 2); // after the emoji
  assert.equal(utf16Column(line, 2), 3);
  assert.equal(utf16Column(line, 3), 4);
});

test('past the end clamps; a negative column is the end of the line', () => {
  assert.equal(utf16Column('ab', 10), 2);
  assert.equal(utf16Column('a😀', -1), 3);
  assert.equal(codePointColumn('ab', 10), 2);
});
