// A stand-in for VS Code's documents behind the real bridge server (src/protocol.ts), for
// tests/test_editor_bridge_files.py: several open documents with unsaved text, the edits applied to
// them (with an undo stack, as Ctrl+Z), the server's "files changed" notices and diagnostics the test
// sets. It answers the way src/files.ts and src/handlers.ts do; the real VS Code is exercised by
// tests/e2e/test_vscode_files.py.
// Usage: PEER_TOKEN=... node peer_files.js SOCKET_PATH   (prints "ready" once listening)

import * as fs from 'node:fs';
import { BridgeError, BridgeServer, Handler } from '../src/protocol';

interface Pos {
  line: number;
  character: number;
}
interface Doc {
  text: string;
  version: number;
  dirty: boolean;
  undo: string[];
}
const docs = new Map<string, Doc>();
let active: string | null = null;
let diagnostics: unknown[] = [];
const changed: string[][] = [];
let discardAfter: string | null = null;

function doc(path: unknown): Doc {
  const d = docs.get(String(path));
  if (!d) throw new BridgeError('not_found', `${String(path)} is not open`);
  return d;
}

function offset(text: string, p: Pos): number {
  const lines = text.split('\n');
  let n = 0;
  for (let i = 0; i < p.line; i++) n += [...lines[i]].length + 1;
  return n + p.character;
}

const handlers: Record<string, Handler> = {
  state: () => ({
    active,
    open: [...docs].map(([path, d]) => ({ path, dirty: d.dirty })),
    visible: active ? [active] : [],
  }),
  active: () => {
    if (!active) return null;
    const d = doc(active);
    const zero = { line: 0, character: 0 };
    return { path: active, text: d.text, dirty: d.dirty, version: d.version, selection: { anchor: zero, active: zero } };
  },
  open: (params) => {
    const path = String(params.path);
    if (!docs.has(path)) docs.set(path, { text: fs.readFileSync(path, 'utf8'), version: 1, dirty: false, undo: [] });
    active = path;
    return { selection: { anchor: { line: 0, character: 0 }, active: { line: 0, character: 0 } } };
  },
  // The person types: the document's whole text becomes `text`, unsaved.
  type: (params) => {
    const d = doc(params.path);
    d.undo.push(d.text);
    d.text = String(params.text);
    d.version += 1;
    d.dirty = true;
    return {};
  },
  // The person presses Ctrl+Z.
  undo: (params) => {
    const d = doc(params.path);
    const before = d.undo.pop();
    if (before !== undefined) {
      d.text = before;
      d.version += 1;
    }
    return { text: d.text };
  },
  // The person closes the editor of `path` without saving.
  discard: (params) => {
    docs.delete(String(params.path));
    if (active === params.path) active = null;
    return {};
  },
  // What the person sees in the editor of `path`.
  text: (params) => ({ text: doc(params.path).text, dirty: doc(params.path).dirty }),
  // The person closes the editor of `path` without saving right after the server's next read of it.
  discardAfterNextRead: (params) => {
    discardAfter = String(params.path);
    return {};
  },
  buffer: (params) => {
    const d = docs.get(String(params.path));
    const answer = d && d.dirty ? { text: d.text, crlf: false, version: d.version } : null;
    if (discardAfter === params.path) {
      discardAfter = null;
      docs.delete(String(params.path));
    }
    return answer;
  },
  editBuffer: (params) => {
    const d = doc(params.path);
    if (params.version !== d.version) throw new BridgeError('conflict', 'conflict: changed in VS Code while the edit was prepared');
    const chars = [...d.text];
    const s = offset(d.text, params.start as Pos);
    const e = offset(d.text, params.end as Pos);
    d.undo.push(d.text);
    d.text = chars.slice(0, s).join('') + String(params.text) + chars.slice(e).join('');
    d.version += 1;
    return { version: d.version, dirty: true };
  },
  replaceText: (params) => {
    const d = doc(params.path);
    if (params.version !== d.version) throw new BridgeError('conflict', 'conflict: changed');
    d.undo.push(d.text);
    d.text = String(params.text);
    d.version += 1;
    if (params.save === true) fs.writeFileSync(String(params.path), d.text);
    else d.dirty = true;
    return { selection: { anchor: { line: 0, character: 0 }, active: { line: 0, character: 0 } } };
  },
  filesChanged: (params) => {
    const paths = (params.paths as string[]) ?? [];
    changed.push(paths);
    const out = { reloading: [] as string[], unsaved: [] as string[], off: false };
    for (const path of paths) {
      const d = docs.get(path);
      if (!d) continue;
      if (d.dirty) {
        out.unsaved.push(path);
      } else {
        d.text = fs.readFileSync(path, 'utf8'); // VS Code reloads a clean editor
        d.version += 1;
        out.reloading.push(path);
      }
    }
    return out;
  },
  changedFiles: () => changed,
  setDiagnostics: (params) => {
    diagnostics = (params.files as unknown[]) ?? [];
    return {};
  },
  diagnostics: () => diagnostics,
};

const server = new BridgeServer(process.env.PEER_TOKEN ?? '', handlers, { extension: 'peer-files' }, (line) => process.stderr.write(line + '\n'));
server.listen(process.argv[2]).then(() => process.stdout.write('ready\n'));
process.on('SIGTERM', () => {
  server.close();
  process.exit(0);
});
