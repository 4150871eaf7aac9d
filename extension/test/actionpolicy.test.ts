import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { askConsent, commandTitle, jsonResult, refusal, runsCode } from '../src/actionpolicy';

test('commands that close the window, uninstall extensions, change trust or settings are refused, naming the setting', () => {
  for (const id of ['workbench.action.closeWindow', 'workbench.action.quit', 'workbench.extensions.uninstallExtension', 'workbench.trust.manage', 'workbench.action.toggleAutoSave']) {
    const why = refusal(id, []);
    assert.ok(why?.startsWith('refused: '), id);
    assert.match(why ?? '', /mcpServerIde\.actions\.allow/);
  }
  assert.equal(refusal('workbench.action.files.newUntitledFile', []), undefined);
  assert.equal(refusal('workbench.action.closeWindowish', []), undefined); // exact ids are not prefixes
});

test('the allow setting lets a refused command run (an id, or a prefix with *)', () => {
  assert.equal(refusal('workbench.action.quit', ['workbench.action.quit']), undefined);
  assert.equal(refusal('workbench.extensions.uninstallExtension', ['workbench.extensions.*']), undefined);
  assert.ok(refusal('workbench.action.quit', ['workbench.action.quitter']));
});

test('Restricted Mode consent: only the accepting answer runs; a refusal or no answer within the bound does not', async () => {
  assert.equal(await askConsent(async () => 'Run', 'Run', 5000), 'yes');
  assert.equal(await askConsent(async () => undefined, 'Run', 5000), 'no'); // Cancel / Escape
  assert.equal(await askConsent(async () => { throw new Error('x'); }, 'Run', 5000), 'no');
  let late: (v: string) => void = () => {};
  const pending = askConsent(() => new Promise<string>((r) => (late = r)), 'Run', 50);
  assert.equal(await pending, 'timeout');
  late('Run'); // consent given after the bound changes nothing
  assert.equal(await pending, 'timeout');
});

test('command results: JSON data, bounded; others get a note', () => {
  assert.deepEqual(jsonResult({ a: [1, 'x'] }), { result: { a: [1, 'x'] } });
  assert.deepEqual(jsonResult(undefined), {});
  const loop: Record<string, unknown> = {};
  loop.self = loop;
  assert.match(jsonResult(loop).note ?? '', /not JSON-serialisable/);
  assert.match(jsonResult('x'.repeat(100), 50).note ?? '', /over the 50-byte limit/);
});

test('command titles from contributes.commands', () => {
  assert.equal(commandTitle({ title: 'Restart', category: 'MCP Server IDE' }), 'MCP Server IDE: Restart');
  assert.equal(commandTitle({ title: { value: 'Open', original: 'Open' } }), 'Open');
  assert.equal(commandTitle({ category: 'x' }), undefined);
});

test('commands that run the workspace code are known (they ask first in an untrusted workspace)', () => {
  for (const id of ['workbench.action.tasks.runTask', 'workbench.action.debug.start', 'workbench.action.terminal.runActiveFile', 'testing.runAll']) {
    assert.ok(runsCode(id), id);
  }
  assert.ok(!runsCode('workbench.action.files.newUntitledFile'));
});
