import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { announcedPort, connectionConfig, definitionVersion, parsePortRange, serverArgs } from '../src/settings';

const base = { args: [], protectedPaths: [], readOnly: false, untrusted: 'auto' as const, tools: '' };

test('a trusted folder gets just --workspace', () => {
  assert.deepEqual(serverArgs(base, '/ws', true), ['--workspace', '/ws']);
});

test('Restricted Mode starts the server untrusted unless the setting says never', () => {
  assert.ok(serverArgs(base, '/ws', false).includes('--untrusted'));
  assert.ok(!serverArgs({ ...base, untrusted: 'never' }, '/ws', false).includes('--untrusted'));
  assert.ok(serverArgs({ ...base, untrusted: 'always' }, '/ws', true).includes('--untrusted'));
});

test('settings become flags', () => {
  const args = serverArgs({ args: ['--log-level', 'INFO'], protectedPaths: ['src/brand', ' '], readOnly: true, untrusted: 'never', tools: ' jetbrains,-wait ' }, '/ws', true);
  assert.deepEqual(args, ['--log-level', 'INFO', '--workspace', '/ws', '--protect', 'src/brand', '--read-only', '--tools', 'jetbrains,-wait']);
});

test('port ranges', () => {
  assert.deepEqual(parsePortRange('9960-9990'), [9960, 9990]);
  assert.throws(() => parsePortRange('9990-9960'), /not a range/);
  assert.throws(() => parsePortRange('http'), /not a range/);
});

test('the announced port is read from the server log line', () => {
  assert.equal(announcedPort('mcp-server-ide: listening on http://127.0.0.1:9961/mcp (REST at POST /mcp/<tool>)'), 9961);
  assert.equal(announcedPort('starting'), undefined);
});

test('connection config names one server ide', () => {
  assert.deepEqual(JSON.parse(connectionConfig([{ name: 'w', port: 9960 }])), { mcpServers: { ide: { type: 'http', url: 'http://127.0.0.1:9960/mcp' } } });
});

test('the definition version changes with the options, so VS Code does not reuse a stale tool list', () => {
  const a = definitionVersion('0.1.0', '/py', serverArgs(base, '/ws', true));
  assert.match(a, /^0\.1\.0\+[0-9a-f]{10}$/);
  assert.equal(a, definitionVersion('0.1.0', '/py', serverArgs(base, '/ws', true)));
  assert.notEqual(a, definitionVersion('0.1.0', '/py', serverArgs({ ...base, tools: 'core' }, '/ws', true)));
  assert.notEqual(a, definitionVersion('0.1.0', '/py', serverArgs({ ...base, readOnly: true }, '/ws', true)));
});
