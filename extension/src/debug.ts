// The bridge's handlers for VS Code's own debug sessions: the server's debugger tools drive them, so
// the person sees the assistant's session in VS Code's debug views. `debug.start` starts a launch
// configuration (`debug.startDebugging`); a tracker registered for every debug type sees each
// session's Debug Adapter Protocol traffic and keeps its events (debugstate.ts) for `debug.events`
// (a long poll); `debug.request` sends a DAP request through `session.customRequest` to the session
// running the program (js-debug's child session); `debug.stop` stops it (`debug.stopDebugging`).
// Sessions the person started are listed and driven the same way.

import * as vscode from 'vscode';
import { consent } from './actions';
import { BreakpointAnswers, debuggerTypes, FORWARDED, localPaths, RESUMING, Run } from './debugstate';
import { BridgeError, Handler } from './protocol';

const MARKER = '__mcpIdeRun';
const KEPT_ENDED = 16;

const runs = new Map<string, Run>(); // by root session id
const roots = new Map<string, vscode.DebugSession>();
const program = new Map<string, vscode.DebugSession>(); // root id -> the session that runs the program
const children = new Set<string>(); // ids of root sessions that have child sessions
let marks = 0;

function rootOf(session: vscode.DebugSession): vscode.DebugSession {
  let s = session;
  while (s.parentSession) s = s.parentSession;
  return s;
}

function runOf(session: vscode.DebugSession): Run {
  const root = rootOf(session);
  let run = runs.get(root.id);
  if (!run) {
    run = new Run(root.id, root.name, root.type, typeof root.configuration[MARKER] === 'string');
    runs.set(root.id, run);
    roots.set(root.id, root);
    const ended = [...runs.values()].filter((r) => r.state === 'ended');
    for (const old of ended.slice(0, Math.max(0, ended.length - KEPT_ENDED))) {
      runs.delete(old.id);
      roots.delete(old.id);
      program.delete(old.id);
      children.delete(old.id);
    }
  }
  return run;
}

function tracker(session: vscode.DebugSession): vscode.DebugAdapterTracker {
  const answers = new BreakpointAnswers();
  const root = rootOf(session);
  return {
    onWillReceiveMessage: (m: { type?: string; command?: string; arguments?: { threadId?: unknown } }) => {
      if (m.type !== 'request') return;
      answers.request(m);
      if (RESUMING.has(String(m.command))) runOf(session).push('continued', { threadId: m.arguments?.threadId, allThreadsContinued: true });
    },
    onDidSendMessage: (m: { type?: string; event?: string; body?: Record<string, unknown> }) => {
      if (m.type === 'response') {
        const found = answers.response(m);
        // a parent js-debug session answers for no program: only the program's session counts
        if (found && !(session === root && children.has(root.id))) runOf(session).push('_breakpoints', localPaths(found));
        return;
      }
      if (m.type !== 'event' || !FORWARDED.has(String(m.event))) return;
      if (m.event === 'terminated' && session !== root) return; // the root's end ends the run
      if (m.event === 'stopped') program.set(root.id, session);
      runOf(session).push(String(m.event), localPaths(m.body ?? {}));
    },
  };
}

const folders = (): readonly vscode.WorkspaceFolder[] => vscode.workspace.workspaceFolders ?? [];

function str(value: unknown, name: string): string {
  if (typeof value !== 'string' || !value) throw new BridgeError('invalid', `bridge: ${name} must be a non-empty string`);
  return value;
}

function known(id: unknown): { run: Run; root: vscode.DebugSession } {
  const run = runs.get(str(id, 'id'));
  const root = run && roots.get(run.id);
  if (!run || !root) throw new BridgeError('not_found', `not found: VS Code has no debug session ${JSON.stringify(id)} (its extension host may have restarted)`);
  return { run, root };
}

function waitFor<T>(find: () => T | undefined, ms: number): Promise<T | undefined> {
  const until = Date.now() + ms;
  return new Promise((done) => {
    const look = () => {
      const found = find();
      if (found !== undefined || Date.now() > until) return done(found);
      setTimeout(look, 50);
    };
    look();
  });
}

function sourceBreakpoints(): vscode.SourceBreakpoint[] {
  return vscode.debug.breakpoints.filter((b): b is vscode.SourceBreakpoint => b instanceof vscode.SourceBreakpoint);
}

function describe(run: Run): Record<string, unknown> {
  const out: Record<string, unknown> = { id: run.id, name: run.name, type: run.type, state: run.state, ours: run.ours };
  if (run.exitCode !== undefined) out.exitCode = run.exitCode;
  return out;
}

export function debugHandlers(subscriptions: { dispose(): unknown }[]): Record<string, Handler> {
  subscriptions.push(
    vscode.debug.registerDebugAdapterTrackerFactory('*', { createDebugAdapterTracker: tracker }),
    vscode.debug.onDidStartDebugSession((s) => {
      const root = rootOf(s);
      runOf(s);
      if (s !== root) {
        children.add(root.id);
        if (!program.has(root.id) || program.get(root.id) === root) program.set(root.id, s);
      }
    }),
    vscode.debug.onDidTerminateDebugSession((s) => {
      if (!s.parentSession) runs.get(s.id)?.push('terminated', {});
    }),
  );

  return {
    'debug.types': () => ({ types: debuggerTypes(vscode.extensions.all.map((e) => e.packageJSON as unknown)) }),

    'debug.start': async (params) => {
      const configuration = params.configuration;
      if (!configuration || typeof configuration !== 'object') throw new BridgeError('invalid', 'bridge: configuration must be an object');
      const config = { ...(configuration as Record<string, unknown>) } as vscode.DebugConfiguration;
      const name = str(config.name, 'configuration.name');
      const folder = folders().find((f) => f.uri.fsPath === params.folder) ?? folders()[0];
      await consent(params, `the launch configuration ${JSON.stringify(name)} under VS Code's debugger`);
      const mark = `run-${++marks}-${Date.now()}`;
      config[MARKER] = mark;
      const ok = await vscode.debug.startDebugging(folder, config);
      if (!ok) throw new BridgeError('unavailable', `VS Code did not start ${JSON.stringify(name)} under its debugger (see its Debug Console or notifications)`);
      const root = await waitFor(() => [...roots.values()].find((s) => s.configuration[MARKER] === mark), 10000);
      if (!root) throw new BridgeError('unavailable', `VS Code started ${JSON.stringify(name)} but its debug session was not seen within 10 s`);
      return describe(runOf(root));
    },

    'debug.list': () => [...runs.values()].map(describe),

    'debug.events': (params) => {
      const { run } = known(params.id);
      const ms = Math.min(Math.max(Number(params.ms) || 0, 0), 30000);
      return run.wait(Math.max(Number(params.since) || 0, 0), ms);
    },

    'debug.request': async (params) => {
      const { run, root } = known(params.id);
      if (run.state === 'ended') throw new BridgeError('conflict', `conflict: the debug session ${JSON.stringify(run.name)} ended in VS Code`);
      const command = str(params.command, 'command');
      const session = program.get(run.id) ?? root;
      try {
        return localPaths((await session.customRequest(command, (params.arguments ?? {}) as Record<string, unknown>)) ?? {});
      } catch (err) {
        throw new BridgeError('conflict', `the debugger refused ${command}: ${err instanceof Error ? err.message : String(err)}`);
      }
    },

    'debug.stop': async (params) => {
      const { run, root } = known(params.id);
      if (run.state === 'ended') return { stopped: false };
      await vscode.debug.stopDebugging(root);
      return { stopped: true };
    },

    'debug.breakpointOptions': (params) => {
      const path = str(params.path, 'path');
      const line = Number(params.line);
      const here = sourceBreakpoints().filter((b) => b.location.uri.fsPath === path && b.location.range.start.line === line);
      if (here.length === 0) return { updated: false };
      const opt = (k: string) => (typeof params[k] === 'string' && params[k] ? (params[k] as string) : undefined);
      vscode.debug.removeBreakpoints(here);
      vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(here[0].location, here[0].enabled, opt('condition'), opt('hitCondition'), opt('logMessage'))]);
      return { updated: true };
    },
  };
}
