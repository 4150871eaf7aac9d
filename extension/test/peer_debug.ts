// A stand-in for VS Code's debugger behind the real bridge server (src/protocol.ts), for
// tests/test_bridge_debug.py: it answers the debug.* methods the way src/debug.ts does, with one
// scripted node session kept in the real event log of src/debugstate.ts (stopped at app.js:4 in
// `total`, locals sum=6 and xs=[1,2,3]). VS Code cannot run in the default suite; the real proof is
// tests/e2e/test_vscode_debug.py. Usage: PEER_TOKEN=... PEER_APP=/ws/app.js node peer_debug.js SOCKET

import { Run } from '../src/debugstate';
import { BridgeError, BridgeServer, Handler } from '../src/protocol';

const app = process.env.PEER_APP ?? '/app.js';
let run: Run | undefined;

function dap(command: string, args: Record<string, unknown>): unknown {
  switch (command) {
    case 'threads':
      return { threads: [{ id: 1, name: 'main' }] };
    case 'stackTrace':
      return { stackFrames: [{ id: 7, name: 'total', source: { path: app }, line: 4, column: 3 }], totalFrames: 1 };
    case 'scopes':
      return { scopes: [{ name: 'Local', variablesReference: 10 }] };
    case 'variables':
      if (args.variablesReference === 11) return { variables: [1, 2, 3].map((n, i) => ({ name: String(i), value: String(n), variablesReference: 0 })) };
      return { variables: [{ name: 'sum', value: '6', variablesReference: 0 }, { name: 'xs', value: '(3) [1, 2, 3]', variablesReference: 11, indexedVariables: 3 }] };
    case 'evaluate':
      return { result: args.expression === 'sum * 7' ? '42' : '?', variablesReference: 0 };
    case 'continue':
      setTimeout(() => {
        run?.push('output', { category: 'stdout', output: 'result 6\n' });
        run?.push('output', { category: 'console', output: 'Process exited with code 3\n' });
        run?.push('terminated');
      }, 100);
      return { allThreadsContinued: true };
    default:
      throw new BridgeError('conflict', `the debugger refused ${command}: not in this stand-in`);
  }
}

const handlers: Record<string, Handler> = {
  breakpoints: () => [{ path: app, line: 3 }],
  'debug.types': () => ({ types: ['node', 'pwa-node'] }),
  'debug.start': (params) => {
    const config = params.configuration as { name?: string; type?: string };
    run = new Run('vs-1', String(config.name), String(config.type), true);
    setTimeout(() => {
      run?.push('_breakpoints', { path: app, asked: [{ line: 4 }], got: [{ verified: true, line: 4 }] });
      run?.push('stopped', { reason: 'breakpoint', threadId: 1 });
    }, 100);
    return { id: run.id, name: run.name, type: run.type, state: run.state, ours: true };
  },
  'debug.list': () => (run ? [{ id: run.id, name: run.name, type: run.type, state: run.state, ours: true }] : []),
  'debug.events': (params) => {
    if (!run || params.id !== run.id) throw new BridgeError('not_found', 'not found: no such session');
    return run.wait(Number(params.since) || 0, Math.min(Number(params.ms) || 0, 30000));
  },
  'debug.request': (params) => {
    if (!run || params.id !== run.id) throw new BridgeError('not_found', 'not found: no such session');
    return dap(String(params.command), (params.arguments ?? {}) as Record<string, unknown>);
  },
  'debug.stop': () => {
    run?.push('terminated');
    return { stopped: true };
  },
};

const server = new BridgeServer(process.env.PEER_TOKEN ?? '', handlers, { extension: 'peer-debug' });
server.listen(process.argv[2]).then(() => process.stdout.write('ready\n'));
process.on('SIGTERM', () => {
  server.close();
  process.exit(0);
});
