// A stand-in for VS Code's tasks, launch configurations, commands and extensions behind the real
// bridge server (src/protocol.ts), answering as src/actions.ts does, for tests/test_bridge_actions.py.
// The deny list is the real one (src/actionpolicy.ts); the real VS Code is tests/e2e/test_vscode_actions.py.
// Usage: PEER_TOKEN=... PEER_WS=/folder node actions-peer.js SOCKET_PATH   (prints "ready")

import { refusal } from '../src/actionpolicy';
import { BridgeError, BridgeServer, Handler } from '../src/protocol';

const ws = process.env.PEER_WS ?? '/nowhere';
interface Run {
  name: string;
  kind: string;
  ended?: { exitCode?: number };
  waiters: (() => void)[];
}
const runs = new Map<string, Run>();
const ran: string[] = [];
let count = 0;
let nextConsent: 'yes' | 'no' | 'timeout' = 'yes';
let exitCode = 3;
let asked = 0;

const listed = [
  { name: 'echo marker', folder: ws, kind: 'task' },
  { name: 'npm: build', folder: ws, kind: 'task' },
  { name: 'Launch app', folder: ws, kind: 'launch' },
  { name: 'elsewhere', folder: '/another/folder', kind: 'task' },
];

function end(run: Run, code?: number): void {
  run.ended = code === undefined ? {} : { exitCode: code };
  for (const w of run.waiters.splice(0)) w();
}

const handlers: Record<string, Handler> = {
  // An editor with no file open (the editor tools' stand-in is test/peer.ts).
  state: () => ({ active: null, open: [], visible: [] }),
  active: () => null,
  breakpoints: () => [],
  'runs.list': () => listed,
  'runs.start': async (params) => {
    const item = listed.find((l) => l.name === params.name);
    if (!item) throw new BridgeError('not_found', `not found: ${String(params.name)}`);
    if (params.confirm === true) {
      asked += 1;
      if (nextConsent === 'no') throw new BridgeError('refused', `refused: the person declined to run the task ${JSON.stringify(item.name)} (this workspace is not trusted)`);
      if (nextConsent === 'timeout') {
        await new Promise((r) => setTimeout(r, Math.min(Number(params.consentMs), 300)));
        throw new BridgeError('refused', `refused: the person did not answer within 60 s whether to run the task ${JSON.stringify(item.name)} (this workspace is not trusted); nothing ran`);
      }
    }
    const id = `${item.kind}-${++count}`;
    const run: Run = { name: item.name, kind: item.kind, waiters: [] };
    runs.set(id, run);
    ran.push(`${item.name}${params.noDebug === true ? '' : ' (debug)'}`);
    return { id, kind: item.kind, terminal: `Task - ${item.name}` };
  },
  'runs.wait': (params) => {
    const ids = (params.ids as string[]) ?? [];
    const report = () => {
      const ended: Record<string, unknown> = {};
      for (const id of ids) {
        const run = runs.get(id);
        if (!run) ended[id] = { gone: true };
        else if (run.ended) ended[id] = run.ended;
      }
      return { ended };
    };
    if (Object.keys(report().ended).length) return report();
    return new Promise((done) => {
      const finish = () => {
        clearTimeout(timer);
        done(report());
      };
      const timer = setTimeout(finish, Number(params.timeoutMs) || 0);
      for (const id of ids) runs.get(id)?.waiters.push(finish);
    });
  },
  'runs.forget': (params) => {
    for (const id of (params.ids as string[]) ?? []) runs.delete(id);
    return {};
  },
  'runs.stop': (params) => {
    const run = runs.get(String(params.id));
    if (run && !run.ended) end(run, 130);
    return { stopped: Boolean(run) };
  },
  'runs.progress': () =>
    [...runs.entries()].filter(([, r]) => !r.ended).map(([id, r]) => ({ title: r.name, kind: r.kind === 'task' ? 'task' : 'debug session', run: id })),
  'commands.list': () => [
    { id: 'mcpServerIde.restart', title: 'MCP Server IDE: Restart' },
    { id: 'workbench.action.files.newUntitledFile' },
    { id: 'workbench.action.quit' },
  ],
  'commands.run': (params) => {
    const id = String(params.id);
    const why = refusal(id, []);
    if (why) throw new BridgeError('refused', why);
    ran.push(id);
    return { result: { opened: 'Untitled-1' } };
  },
  extensions: () => ({ installed: ['ms-python.python@2026.1.0'], builtin: ['vscode.git'] }),
  // For the test: what the person will answer next, the exit code tasks end with, and what ran.
  'peer.set': (params) => {
    if (params.consent) nextConsent = params.consent as typeof nextConsent;
    if (typeof params.exitCode === 'number') exitCode = params.exitCode;
    return {};
  },
  'peer.ran': () => ({ ran, asked }),
  // The person's running tasks end (with the exit code set last).
  'peer.end': () => {
    for (const run of runs.values()) if (!run.ended && run.kind === 'task') end(run, exitCode);
    return {};
  },
};

const server = new BridgeServer(process.env.PEER_TOKEN ?? '', handlers);
server.listen(process.argv[2]).then(() => console.log('ready'));
