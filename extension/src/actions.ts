// The bridge's handlers for run configurations, commands, progress and extensions: VS Code's tasks
// (`tasks.fetchTasks` / `executeTask`), launch configurations (`debug.startDebugging`), commands
// (`commands.getCommands` / `executeCommand`, refused per actionpolicy.ts unless allowed in
// `mcpServerIde.actions.allow`), running tasks and debug sessions, and the installed extensions.
// In Restricted Mode (or when the server is untrusted) nothing runs without the person's consent
// in a modal; an unanswered modal counts as a refusal after the server's bound.

import * as vscode from 'vscode';
import { ALLOW_SETTING, askConsent, commandTitle, jsonResult, refusal, runsCode } from './actionpolicy';
import { BridgeError, Handler } from './protocol';

interface Started {
  kind: 'task' | 'launch';
  name: string;
  execution?: vscode.TaskExecution;
  session?: vscode.DebugSession;
  ended?: { exitCode?: number };
  waiters: (() => void)[];
}

const started = new Map<string, Started>();
let starting = 0;
let idle: (() => void)[] = [];

/** Resolves once no `runs.start` is in flight (then 2 s more, for the server to send its answer):
 * granting trust during one (VS Code asks before a task runs in Restricted Mode) restarts the
 * servers, which must not cut that answer off. */
export function afterRunsStart(): Promise<void> {
  const later = () => new Promise<void>((done) => setTimeout(done, 2000));
  if (starting === 0) return Promise.resolve();
  return new Promise<void>((done) => idle.push(done)).then(later);
}
const sessions = new Set<vscode.DebugSession>();
let count = 0;

function end(run: Started, exitCode?: number): void {
  if (run.ended) return;
  run.ended = exitCode === undefined ? {} : { exitCode };
  for (const wake of run.waiters.splice(0)) wake();
}

function runOf(pred: (run: Started) => boolean): Started | undefined {
  for (const run of started.values()) if (!run.ended && pred(run)) return run;
  return undefined;
}

const folders = (): readonly vscode.WorkspaceFolder[] => vscode.workspace.workspaceFolders ?? [];

function folderPath(scope: unknown): string | undefined {
  return scope && typeof scope === 'object' && 'uri' in scope ? (scope as vscode.WorkspaceFolder).uri.fsPath : undefined;
}

function taskName(task: vscode.Task): string {
  return task.source === 'Workspace' ? task.name : `${task.source}: ${task.name}`;
}

function names(section: 'launch' | 'tasks', key: string, folder: vscode.WorkspaceFolder, field: string): string[] {
  const items = vscode.workspace.getConfiguration(section, folder.uri).get<unknown[]>(key) ?? [];
  return (Array.isArray(items) ? items : [])
    .map((i) => (i && typeof i === 'object' ? (i as Record<string, unknown>)[field] : undefined))
    .filter((n): n is string => typeof n === 'string' && n.length > 0);
}

interface Listed {
  name: string;
  folder?: string;
  kind: 'task' | 'launch';
}

/** Trusted: VS Code's task providers. Restricted Mode: fetching tasks would make VS Code ask for
 * trust, so only tasks.json's labels are read (from the configuration). */
async function listed(trusted: boolean): Promise<Listed[]> {
  const out: Listed[] = [];
  for (const folder of folders()) {
    for (const key of ['configurations', 'compounds']) {
      for (const name of names('launch', key, folder, 'name')) out.push({ name, folder: folder.uri.fsPath, kind: 'launch' });
    }
  }
  if (trusted) {
    for (const task of await vscode.tasks.fetchTasks()) out.push({ name: taskName(task), folder: folderPath(task.scope), kind: 'task' });
  } else {
    for (const folder of folders()) {
      for (const name of names('tasks', 'tasks', folder, 'label')) out.push({ name, folder: folder.uri.fsPath, kind: 'task' });
    }
  }
  return out;
}

function str(value: unknown, name: string): string {
  if (typeof value !== 'string' || !value) throw new BridgeError('invalid', `bridge: ${name} must be a non-empty string`);
  return value;
}

export async function consent(params: Record<string, unknown>, what: string): Promise<void> {
  if (vscode.workspace.isTrusted && params.confirm !== true) return;
  const ms = Math.min(Math.max(Number(params.consentMs) || 60000, 1000), 600000);
  const answer = await askConsent(
    () =>
      vscode.window.showWarningMessage(
        `An AI assistant asks to run ${what} from this workspace.`,
        {
          modal: true,
          detail:
            (vscode.workspace.isTrusted ? 'The MCP server runs untrusted. ' : 'This workspace is in Restricted Mode. ') +
            `It runs programs the workspace defines${typeof params.detail === 'string' && params.detail ? `: ${params.detail}` : ''}.`,
        },
        'Run',
      ),
    'Run',
    ms,
  );
  if (answer === 'no') throw new BridgeError('refused', `refused: the person declined to run ${what} (this workspace is not trusted)`);
  if (answer === 'timeout') {
    throw new BridgeError('refused', `refused: the person did not answer within ${Math.round(ms / 1000)} s whether to run ${what} (this workspace is not trusted); nothing ran`);
  }
}

async function start(params: Record<string, unknown>): Promise<unknown> {
  const name = str(params.name, 'name');
  const folder = typeof params.folder === 'string' ? params.folder : undefined;
  const trustedNow = vscode.workspace.isTrusted;
  const known = (await listed(trustedNow)).filter((l) => l.name === name && (!folder || !l.folder || l.folder === folder));
  const item = known.find((l) => l.kind === 'launch') ?? known[0];
  if (!item) throw new BridgeError('not_found', `not found: VS Code has no task or launch configuration named ${JSON.stringify(name)}`);
  const what = item.kind === 'task' ? `the task ${JSON.stringify(name)}` : `the launch configuration ${JSON.stringify(name)}`;
  await consent(params, what);
  const id = `${item.kind}-${++count}`;
  const run: Started = { kind: item.kind, name, waiters: [] };
  if (item.kind === 'task') {
    const task = (await vscode.tasks.fetchTasks()).find((t) => taskName(t) === name && (!item.folder || folderPath(t.scope) === item.folder));
    if (!task && !vscode.workspace.isTrusted) {
      throw new BridgeError('refused', `refused: VS Code runs tasks only in a trusted workspace and the person did not trust this one; ${what} did not run`);
    }
    if (!task) throw new BridgeError('not_found', `not found: VS Code no longer offers the task ${JSON.stringify(name)}`);
    run.execution = await vscode.tasks.executeTask(task);
    started.set(id, run);
    return { id, kind: 'task', terminal: `Task - ${task.name}` };
  }
  const ws = folders().find((f) => f.uri.fsPath === item.folder);
  started.set(id, run);
  const ok = await vscode.debug.startDebugging(ws, name, { noDebug: params.noDebug === true });
  if (!ok) {
    started.delete(id);
    throw new BridgeError('unavailable', `VS Code did not start the launch configuration ${JSON.stringify(name)} (see its Debug Console or notifications)`);
  }
  return { id, kind: 'launch' };
}

export function actionHandlers(subscriptions: { dispose(): unknown }[]): Record<string, Handler> {
  subscriptions.push(
    vscode.tasks.onDidEndTaskProcess((e) => {
      const run = runOf((r) => r.execution === e.execution);
      if (run) end(run, e.exitCode);
    }),
    vscode.tasks.onDidEndTask((e) => {
      const run = runOf((r) => r.execution === e.execution);
      // onDidEndTaskProcess comes first for a process task; a task without a process ends here.
      if (run) setTimeout(() => end(run), 500);
    }),
    vscode.debug.onDidStartDebugSession((s) => {
      sessions.add(s);
      const run = runOf((r) => r.kind === 'launch' && !r.session && r.name === s.configuration.name);
      if (run) run.session = s;
    }),
    vscode.debug.onDidTerminateDebugSession((s) => {
      sessions.delete(s);
      const run = runOf((r) => r.session === s);
      if (run) end(run);
    }),
  );

  return {
    'runs.list': async () => listed(vscode.workspace.isTrusted),

    'runs.start': async (params) => {
      starting += 1;
      try {
        return await start(params);
      } finally {
        starting -= 1;
        if (starting === 0) for (const done of idle.splice(0)) done();
      }
    },

    'runs.wait': (params) => {
      const ids = Array.isArray(params.ids) ? params.ids.filter((i): i is string => typeof i === 'string') : [];
      const ms = Math.min(Math.max(Number(params.timeoutMs) || 0, 0), 60000);
      const report = () => {
        const ended: Record<string, { exitCode?: number; gone?: boolean }> = {};
        for (const id of ids) {
          const run = started.get(id);
          if (!run) ended[id] = { gone: true };
          else if (run.ended) ended[id] = run.ended;
        }
        return { ended };
      };
      const now = report();
      if (Object.keys(now.ended).length > 0 || ms === 0) return now;
      return new Promise((done) => {
        let finished = false;
        const finish = () => {
          if (finished) return;
          finished = true;
          clearTimeout(timer);
          done(report());
        };
        const timer = setTimeout(finish, ms);
        for (const id of ids) started.get(id)?.waiters.push(finish);
      });
    },

    'runs.forget': (params) => {
      for (const id of Array.isArray(params.ids) ? params.ids : []) if (typeof id === 'string' && started.get(id)?.ended) started.delete(id);
      return {};
    },

    'runs.stop': async (params) => {
      const run = started.get(str(params.id, 'id'));
      if (!run || run.ended) return { stopped: false };
      if (run.execution) run.execution.terminate();
      else if (run.session) await vscode.debug.stopDebugging(run.session);
      return { stopped: true };
    },

    'runs.progress': () => {
      const ids = new Map<unknown, string>();
      for (const [id, run] of started) ids.set(run.execution ?? run.session, id);
      const active = vscode.debug.activeDebugSession;
      const all = new Set(sessions);
      if (active) all.add(active);
      return [
        ...vscode.tasks.taskExecutions.map((e) => ({ title: taskName(e.task), kind: 'task', run: ids.get(e) })),
        ...[...all].map((s) => ({ title: s.name, kind: 'debug session', type: s.type, active: s === active, run: ids.get(s) })),
      ];
    },

    'commands.list': async () => {
      const titles = new Map<string, string>();
      for (const ext of vscode.extensions.all) {
        const contributed = (ext.packageJSON as { contributes?: { commands?: unknown } } | undefined)?.contributes?.commands;
        for (const entry of Array.isArray(contributed) ? contributed : contributed ? [contributed] : []) {
          const title = entry && typeof entry === 'object' ? commandTitle(entry) : undefined;
          const id = (entry as { command?: unknown })?.command;
          if (typeof id === 'string' && title) titles.set(id, title);
        }
      }
      const ids = [...new Set(await vscode.commands.getCommands(true))].sort();
      return ids.map((id) => (titles.has(id) ? { id, title: titles.get(id) } : { id }));
    },

    'commands.run': async (params) => {
      const id = str(params.id, 'id');
      const allowed = vscode.workspace.getConfiguration().get<string[]>(ALLOW_SETTING, []);
      const why = refusal(id, Array.isArray(allowed) ? allowed : []);
      if (why) throw new BridgeError('refused', why);
      if (!(await vscode.commands.getCommands(true)).includes(id)) {
        throw new BridgeError('not_found', `action not found: VS Code has no command ${JSON.stringify(id)} (list_available_actions lists them)`);
      }
      if (runsCode(id)) await consent(params, `the command ${id}`);
      const args = Array.isArray(params.args) ? params.args : [];
      const ms = Math.min(Math.max(Number(params.waitMs) || 10000, 100), 60000);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((done) => (timer = setTimeout(() => done('late'), ms)));
      try {
        const value = await Promise.race([vscode.commands.executeCommand(id, ...args), late]);
        if (value === 'late') return { running: true };
        return jsonResult(value);
      } finally {
        clearTimeout(timer);
      }
    },

    extensions: () => {
      const installed: string[] = [];
      const builtin: string[] = [];
      for (const ext of vscode.extensions.all) {
        const pkg = (ext.packageJSON ?? {}) as { isBuiltin?: boolean; version?: string };
        if (pkg.isBuiltin) builtin.push(ext.id);
        else installed.push(`${ext.id}@${pkg.version ?? '?'}${ext.isActive ? '' : ' (inactive)'}`);
      }
      return { installed: installed.sort(), builtin: builtin.sort() };
    },
  };
}
