// A stand-in for VS Code behind the real bridge server (src/protocol.ts), for the Python tests of the
// server's bridge client (tests/test_editor_bridge.py). It keeps one editor in memory, the way the
// real handlers (src/handlers.ts) answer; the real VS Code is exercised by tests/e2e/test_vscode.py.
// Usage: PEER_TOKEN=... node peer.js SOCKET_PATH   (prints "ready" once listening)

import * as fs from 'node:fs';
import { BridgeError, BridgeServer, Handler, stableSocketPath } from '../src/protocol';

interface Pos {
  line: number;
  character: number;
}
let active: { path: string; text: string; anchor: Pos; cursor: Pos; version: number; dirty: boolean } | null = null;
const open: string[] = [];
let breakpoints: { path: string; line: number }[] = [];
let slowEdit = false;

function offset(text: string, p: Pos): number {
  const lines = text.split('\n');
  let n = 0;
  for (let i = 0; i < p.line; i++) n += [...lines[i]].length + 1;
  return n + p.character;
}
function position(text: string, at: number): Pos {
  const before = [...text].slice(0, at).join('').split('\n');
  return { line: before.length - 1, character: [...before[before.length - 1]].length };
}

function replace(params: Record<string, unknown>): unknown {
  if (!active || active.path !== params.path) throw new BridgeError('not_found', 'no active editor');
  if (params.version !== active.version) throw new BridgeError('conflict', 'conflict: changed');
  const a = offset(active.text, active.anchor);
  const b = offset(active.text, active.cursor);
  const [s, e] = a <= b ? [a, b] : [b, a];
  const chars = [...active.text];
  const text = String(params.text);
  active.text = chars.slice(0, s).join('') + text + chars.slice(e).join('');
  active.cursor = active.anchor = position(active.text, s + [...text].length);
  active.version += 1;
  if (params.save === true) fs.writeFileSync(active.path, active.text);
  else active.dirty = true;
  return { selection: { anchor: active.anchor, active: active.cursor } };
}

const handlers: Record<string, Handler> = {
  state: () => ({
    active: active?.path ?? null,
    open: open.map((path) => ({ path, dirty: active?.path === path && active.dirty })),
    visible: active ? [active.path] : [],
  }),
  active: () =>
    active
      ? { path: active.path, text: active.text, dirty: active.dirty, version: active.version, selection: { anchor: active.anchor, active: active.cursor } }
      : null,
  open: (params) => {
    const path = String(params.path);
    const sel = (params.selection as { anchor: Pos; active: Pos } | undefined) ?? { anchor: { line: 0, character: 0 }, active: { line: 0, character: 0 } };
    active = { path, text: fs.readFileSync(path, 'utf8'), anchor: sel.anchor, cursor: sel.active, version: 1, dirty: false };
    if (!open.includes(path)) open.push(path);
    return { selection: sel };
  },
  // The test makes the buffer dirty (an unsaved edit by the person) through this method.
  type: (params) => {
    if (!active) throw new BridgeError('not_found', 'no active editor');
    active.text = String(params.text);
    active.version += 1;
    active.dirty = true;
    return {};
  },
  // The test makes the next edit take 6 s (longer than the server waits for an edit).
  slowNextEdit: () => {
    slowEdit = true;
    return {};
  },
  replaceSelection: (params) => {
    if (!slowEdit) return replace(params);
    slowEdit = false;
    return new Promise((resolve) => setTimeout(() => resolve(replace(params)), 6000));
  },
  replaceText: (params) => {
    if (!active || active.path !== params.path) throw new BridgeError('not_found', 'no active editor');
    active.text = String(params.text);
    active.version += 1;
    if (params.save === true) fs.writeFileSync(active.path, active.text);
    else active.dirty = true;
    return { selection: { anchor: active.anchor, active: active.cursor } };
  },
  breakpoints: () => breakpoints,
  toggleBreakpoint: (params) => {
    const here = breakpoints.filter((b) => b.path === params.path && b.line === params.line);
    if (here.length) {
      breakpoints = breakpoints.filter((b) => !here.includes(b));
      return { added: false };
    }
    breakpoints.push({ path: String(params.path), line: Number(params.line) });
    return { added: true };
  },
};

const server = new BridgeServer(process.env.PEER_TOKEN ?? '', handlers, { extension: 'peer' }, (line) => process.stderr.write(line + '\n'));
// With PEER_STABLE_BASE, argv[2] is a window key and the socket goes where the real extension puts it
// (stableSocketPath: this user's 0700 folder under that base); "ready PATH" names it.
const socketPath = process.env.PEER_STABLE_BASE ? stableSocketPath(process.argv[2], process.env.PEER_STABLE_BASE) : process.argv[2];
server.listen(socketPath).then(() => process.stdout.write(process.env.PEER_STABLE_BASE ? `ready ${socketPath}\n` : 'ready\n'));
process.on('SIGTERM', () => {
  server.close();
  process.exit(0);
});
