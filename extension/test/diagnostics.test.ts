import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { diagnosticOut } from '../src/diagnostics';

const range = { start: { line: 1, character: 2 }, end: { line: 1, character: 5 } };

test("a diagnostic keeps its range, message, source and code in the server's form", () => {
  assert.deepEqual(diagnosticOut({ severity: 1, range, message: 'Trailing comma', source: 'json', code: 519 }), {
    severity: 'warning', line: 1, character: 2, endLine: 1, endCharacter: 5, message: 'Trailing comma', source: 'json', code: '519',
  });
});

test('a code with a link gives its value; no source or code gives empty strings', () => {
  assert.equal(diagnosticOut({ severity: 0, range, message: 'm', code: { value: 'E1' } }).code, 'E1');
  const bare = diagnosticOut({ severity: 3, range, message: 'm' });
  assert.equal(bare.severity, 'hint');
  assert.equal(bare.source, '');
  assert.equal(bare.code, '');
});
