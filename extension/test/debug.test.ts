import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { BreakpointAnswers, debuggerTypes, localPaths, MAX_EVENTS, OUTPUT_CHARS, Run } from '../src/debugstate';

test('events move the state and are read from a cursor', () => {
  const run = new Run('s1', 'Launch', 'pwa-node', true);
  run.push('stopped', { reason: 'breakpoint', threadId: 1 });
  assert.equal(run.state, 'stopped');
  const first = run.since(0);
  assert.deepEqual(first.events.map((e) => e.event), ['stopped']);
  run.push('continued', { threadId: 1 });
  assert.equal(run.state, 'running');
  const next = run.since(first.next);
  assert.deepEqual(next.events.map((e) => e.event), ['continued']);
  run.push('terminated');
  run.push('terminated');
  run.push('stopped', {});
  assert.equal(run.state, 'ended');
  assert.equal(run.since(0).events.length, 3); // a second end and a late stop are not recorded
});

test("the exit code comes from an exited event, else from js-debug's closing line", () => {
  const a = new Run('a', 'n', 'node', false);
  a.push('output', { category: 'console', output: 'Process exited with code 3\n' });
  assert.equal(a.since(0).exitCode, 3);
  const b = new Run('b', 'n', 'node', false);
  b.push('exited', { exitCode: 0 });
  b.push('output', { output: 'Process exited with code 9' });
  assert.equal(b.exitCode, 0);
});

test('output is cut and the kept events are bounded, the gap reported', () => {
  const run = new Run('s', 'n', 'node', false);
  run.push('output', { output: 'x'.repeat(OUTPUT_CHARS * 3), variablesReference: 4 });
  const kept = run.since(0).events[0].body;
  assert.ok(String(kept.output).length < OUTPUT_CHARS + 40);
  assert.match(String(kept.output), /…\(\+8000 chars\)/);
  assert.equal(kept.variablesReference, undefined);
  for (let i = 0; i < MAX_EVENTS + 10; i++) run.push('output', { output: `${i}` });
  const all = run.since(0);
  assert.equal(all.events.length, MAX_EVENTS);
  assert.equal(all.dropped, 11);
  assert.equal(run.since(all.next).events.length, 0);
});

test('a waiting reader wakes on the next event, or after its time', async () => {
  const run = new Run('s', 'n', 'node', false);
  const waiting = run.wait(0, 10000);
  run.push('stopped', { reason: 'pause' });
  assert.equal((await waiting).events[0].event, 'stopped');
  const idle = await run.wait(run.seq, 10);
  assert.equal(idle.events.length, 0);
  assert.equal(idle.state, 'stopped');
});

test("a setBreakpoints answer is reported with the request's path and lines", () => {
  const answers = new BreakpointAnswers();
  answers.request({ seq: 7, command: 'setBreakpoints', arguments: { source: { path: '/w/app.js' }, breakpoints: [{ line: 3 }] } });
  answers.request({ seq: 8, command: 'threads' });
  assert.equal(answers.response({ request_seq: 8, command: 'threads', body: {} }), undefined);
  assert.deepEqual(answers.response({ request_seq: 7, command: 'setBreakpoints', success: true, body: { breakpoints: [{ verified: true, line: 4 }] } }), {
    path: '/w/app.js',
    asked: [{ line: 3 }],
    got: [{ verified: true, line: 4 }],
  });
  assert.equal(answers.response({ request_seq: 7, command: 'setBreakpoints', body: {} }), undefined); // once
});

test('debug types are read from the extensions manifests', () => {
  const types = debuggerTypes([
    { contributes: { debuggers: [{ type: 'pwa-node' }, { type: 'node' }] } },
    { contributes: { commands: [] } },
    undefined,
    { contributes: { debuggers: [{ type: 'debugpy' }, { label: 'no type' }] } },
  ]);
  assert.deepEqual(types, ['debugpy', 'node', 'pwa-node']);
});

test("paths VS Code made URIs in a remote window's answers are file paths again", () => {
  const answer = {
    stackFrames: [
      { id: 1, source: { path: 'vscode-remote://127.0.0.1:47041/tmp/w%20s/app.js', name: 'app.js' }, line: 4 },
      { id: 2, source: { path: '/tmp/ws/lib.js' }, line: 6 },
      { id: 3, source: { name: 'node:internal', sourceReference: 5 }, line: 1 },
    ],
    totalFrames: 3,
  };
  const local = localPaths(answer);
  assert.deepEqual(local.stackFrames.map((f) => (f.source as { path?: string }).path), ['/tmp/w s/app.js', '/tmp/ws/lib.js', undefined]);
  assert.equal(local.stackFrames[0].source.name, 'app.js');
  assert.equal(local.totalFrames, 3);
  assert.equal(localPaths('x'), 'x');
});
