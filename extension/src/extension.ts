// MCP Server IDE for VS Code: registers the server with VS Code's MCP client (one stdio server a
// workspace folder), optionally serves each folder over HTTP too, and answers the server's editor
// requests over a private bridge (a 0700-folder Unix socket + a random token, both handed to the
// server in its environment). The server stays the one implementation of every tool.

import * as child_process from 'node:child_process';
import * as net from 'node:net';
import * as vscode from 'vscode';
import { actionHandlers, afterRunsStart } from './actions';
import { debugHandlers } from './debug';
import { fileHandlers } from './files';
import { ServerFinder } from './finder';
import { editorHandlers } from './handlers';
import { WHAT_TO_SET } from './install';
import { BridgeServer, newToken, stableSocketPath } from './protocol';
import { announcedPort, connectionConfig, definitionVersion, parsePortRange, ServerSettings, serverArgs } from './settings';

const PROVIDER_ID = 'mcpServerIde';
const SOCKET_VAR = 'MCP_IDE_BRIDGE_SOCKET';
const TOKEN_VAR = 'MCP_IDE_BRIDGE_TOKEN';

let log: vscode.LogOutputChannel;
let bridge: BridgeServer | undefined;
let token = '';
const http = new Map<string, { proc: child_process.ChildProcess; port?: number; name: string }>();
let status: vscode.StatusBarItem;
let finder: ServerFinder;

function settings(): ServerSettings & { command: string; httpEnabled: boolean; portRange: string } {
  const c = vscode.workspace.getConfiguration('mcpServerIde');
  return {
    command: c.get<string>('server.command', '').trim(),
    args: c.get<string[]>('server.args', []),
    protectedPaths: c.get<string[]>('protectedPaths', []),
    readOnly: c.get<boolean>('readOnly', false),
    untrusted: c.get<'auto' | 'always' | 'never'>('untrusted', 'auto'),
    tools: c.get<string>('tools', ''),
    httpEnabled: c.get<boolean>('http.enabled', true),
    portRange: c.get<string>('http.portRange', '9960-9990'),
  };
}

function bridgeEnv(): Record<string, string> {
  return bridge ? { [SOCKET_VAR]: bridge.socketPath, [TOKEN_VAR]: token } : {};
}

function label(folder: vscode.WorkspaceFolder): string {
  return (vscode.workspace.workspaceFolders?.length ?? 0) > 1 ? `mcp-server-ide (${folder.name})` : 'mcp-server-ide';
}

const VERSION = (): string => String(vscode.extensions.getExtension('mcp-server-ide.mcp-server-ide')?.packageJSON?.version ?? '0');

async function definitions(): Promise<vscode.McpStdioServerDefinition[]> {
  const out: vscode.McpStdioServerDefinition[] = [];
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    // Without a server yet, the definition names the install to come: resolving it makes that install.
    const found = await finder.peek(folder);
    const args = [...found.args, ...serverArgs(settings(), folder.uri.fsPath, vscode.workspace.isTrusted)];
    const version = definitionVersion(VERSION(), found.command, args);
    const def = new vscode.McpStdioServerDefinition(label(folder), found.command, args, bridgeEnv(), version);
    def.cwd = folder.uri;
    out.push(def);
  }
  return out;
}

async function resolve(def: vscode.McpServerDefinition): Promise<vscode.McpServerDefinition | undefined> {
  if (!(def instanceof vscode.McpStdioServerDefinition)) return def;
  const folder = (vscode.workspace.workspaceFolders ?? []).find((f) => label(f) === def.label);
  if (folder) {
    // The server is settled here, at start time (installed first when nothing has it), and so is
    // trust: Restricted Mode starts the server untrusted.
    const found = await finder.ensure(folder);
    if (!found) throw new Error(`MCP Server IDE could not install the server (see Show Log). ${WHAT_TO_SET}`);
    def.command = found.command;
    def.args = [...found.args, ...serverArgs(settings(), folder.uri.fsPath, vscode.workspace.isTrusted)];
  }
  def.env = { ...def.env, ...bridgeEnv() };
  log.info(`starting ${def.label}: ${def.command} ${def.args.join(' ')}`);
  return def;
}

function firstFreePort(lo: number, hi: number): Promise<number | undefined> {
  const attempt = (port: number): Promise<number | undefined> =>
    new Promise((done) => {
      if (port > hi) return done(undefined);
      const probe = net.createServer();
      probe.once('error', () => done(attempt(port + 1)));
      probe.listen(port, '127.0.0.1', () => probe.close(() => done(port)));
    });
  return attempt(lo);
}

function updateStatus(): void {
  const ports = [...http.values()].map((h) => h.port).filter((p): p is number => p !== undefined);
  status.text = ports.length ? `$(plug) MCP IDE :${ports.join(',')}` : http.size ? '$(sync~spin) MCP IDE' : '$(plug) MCP IDE';
  status.tooltip = ports.length
    ? `mcp-server-ide serves HTTP on ${ports.map((p) => `http://127.0.0.1:${p}/mcp`).join(', ')}; the bridge has ${bridge?.connections ?? 0} server(s) connected`
    : 'mcp-server-ide: VS Code starts it from MCP: List Servers';
  status.show();
}

async function startHttp(): Promise<void> {
  const s = settings();
  if (!s.httpEnabled) return;
  let range: [number, number];
  try {
    range = parsePortRange(s.portRange);
  } catch (err) {
    void vscode.window.showErrorMessage(String((err as Error).message));
    return;
  }
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const found = await finder.ensure(folder);
    if (!found) continue; // the failed install was shown and logged
    const port = await firstFreePort(range[0], range[1]);
    if (port === undefined) {
      log.error(`no free port in ${s.portRange} for ${folder.name}'s HTTP server`);
      continue;
    }
    const args = [...found.args, ...serverArgs(s, folder.uri.fsPath, vscode.workspace.isTrusted), '--http', '--port', String(port)];
    log.info(`HTTP server for ${folder.name}: ${found.command} ${args.join(' ')}`);
    const proc = child_process.spawn(found.command, args, {
      cwd: folder.uri.fsPath,
      env: { ...process.env, ...bridgeEnv() },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const entry: { proc: child_process.ChildProcess; port?: number; name: string } = { proc, name: folder.name };
    http.set(folder.uri.fsPath, entry);
    let seen = '';
    proc.stderr?.setEncoding('utf8');
    proc.stderr?.on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) if (line.trim()) log.info(`[${folder.name}] ${line}`);
      if (entry.port === undefined) {
        seen = (seen + chunk).slice(-4096);
        entry.port = announcedPort(seen);
        if (entry.port !== undefined) updateStatus();
      }
    });
    proc.on('exit', (code, signal) => {
      log.info(`HTTP server for ${folder.name} exited (${signal ?? code})`);
      if (http.get(folder.uri.fsPath) === entry) http.delete(folder.uri.fsPath);
      updateStatus();
    });
    proc.on('error', (err) => log.error(`HTTP server for ${folder.name} failed to start: ${err.message}`));
  }
  updateStatus();
}

/** Stop the HTTP servers; resolves once they exited (at most 5 s), so a restart can take the same port. */
function stopHttp(): Promise<void> {
  const stopping = [...http.values()].map(
    ({ proc }) =>
      new Promise<void>((done) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return done();
        const timer = setTimeout(done, 5000);
        proc.once('exit', () => {
          clearTimeout(timer);
          done();
        });
        proc.kill('SIGTERM');
      }),
  );
  http.clear();
  return Promise.all(stopping).then(() => undefined);
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  log = vscode.window.createOutputChannel('MCP Server IDE', { log: true });
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  status.command = 'mcpServerIde.showLog';
  context.subscriptions.push(log, status);
  finder = new ServerFinder(context, log, () => settings().command);

  // The token and the socket path stay the same for this window across extension host restarts, so
  // a server started before a restart reconnects to the new host (the token lives in SecretStorage).
  try {
    token = (await context.secrets.get('bridgeToken')) ?? '';
    if (!token) {
      token = newToken();
      await context.secrets.store('bridgeToken', token);
    }
  } catch {
    token = newToken();
  }
  const windowKey = vscode.workspace.workspaceFile?.toString() ?? (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.toString()).join('\n');
  bridge = new BridgeServer(token, { ...editorHandlers(), ...actionHandlers(context.subscriptions), ...fileHandlers((line) => log.info(line)), ...debugHandlers(context.subscriptions) }, { extension: VERSION(), vscode: vscode.version }, (line) => log.info(line));
  try {
    await bridge.listen(stableSocketPath(`${context.globalStorageUri.toString()}\n${windowKey}`));
    log.info(`bridge listening (a private socket; ${SOCKET_VAR}/${TOKEN_VAR} go to the servers it starts)`);
  } catch (err) {
    log.error(`the bridge could not listen, the server will use its headless editor: ${String(err)}`);
    bridge = undefined;
  }

  const changed = new vscode.EventEmitter<void>();
  context.subscriptions.push(changed);
  if (vscode.lm?.registerMcpServerDefinitionProvider) {
    context.subscriptions.push(
      vscode.lm.registerMcpServerDefinitionProvider(PROVIDER_ID, {
        onDidChangeMcpServerDefinitions: changed.event,
        provideMcpServerDefinitions: definitions,
        resolveMcpServerDefinition: resolve,
      }),
    );
  } else {
    log.warn('this VS Code has no vscode.lm.registerMcpServerDefinitionProvider (needs 1.101+)');
  }

  const restart = async () => {
    finder.reset();
    await stopHttp();
    changed.fire();
    await startHttp();
  };
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('mcpServerIde')) void restart();
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => void restart()),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void afterRunsStart().then(restart)),
    vscode.commands.registerCommand('mcpServerIde.restart', restart),
    vscode.commands.registerCommand('mcpServerIde.showLog', () => log.show()),
    vscode.commands.registerCommand('mcpServerIde.copyConnectionConfig', async () => {
      const ports = [...http.values()].filter((h) => h.port !== undefined).map((h) => ({ name: h.name, port: h.port as number }));
      if (ports.length === 0) {
        void vscode.window.showWarningMessage('MCP Server IDE: no HTTP server is running (see mcpServerIde.http.enabled)');
        return;
      }
      await vscode.env.clipboard.writeText(connectionConfig(ports));
      void vscode.window.showInformationMessage('MCP Server IDE: connection config copied');
    }),
    { dispose: () => void stopHttp() },
    { dispose: () => bridge?.close() },
  );
  updateStatus();
  await startHttp();
}

export function deactivate(): void {
  void stopHttp();
  bridge?.close();
}
