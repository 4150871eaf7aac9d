// Finding the server in VS Code: the setting, the Python extension's selected interpreter (when the
// Python extension is installed and that interpreter has the package), `mcp-server-ide` on PATH,
// else the extension's own install into its global storage, made once with a progress notification.
// The choice itself is src/install.ts's chooseServer (unit-tested).

import * as vscode from 'vscode';
import { chooseServer, hasPackage, InstallError, installServer, onPath, ServerCommand, shippedWheel, Source, storageLayout, storageReady } from './install';

interface PythonApi {
  environments?: { getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined };
}

export class ServerFinder {
  private install: Promise<ServerCommand | undefined> | undefined;
  private readonly packageCache = new Map<string, boolean>();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    private readonly setting: () => string,
  ) {}

  /** Forget what was found (and a failed install), so the next start looks again. */
  reset(): void {
    this.packageCache.clear();
    this.install = undefined;
  }

  private layout() {
    return storageLayout(this.context.globalStorageUri.fsPath, shippedWheel(this.context.extensionPath));
  }

  /** The Python extension's selected interpreter for `folder`; undefined when that extension is absent. */
  private async interpreter(folder: vscode.WorkspaceFolder): Promise<string | undefined> {
    const python = vscode.extensions.getExtension<PythonApi>('ms-python.python');
    if (!python) return undefined;
    try {
      const api = python.isActive ? python.exports : await python.activate();
      return api?.environments?.getActiveEnvironmentPath(folder.uri)?.path || undefined;
    } catch (err) {
      this.log.warn(`the Python extension's interpreter could not be read: ${String(err)}`);
      return undefined;
    }
  }

  private async hasPackage(python: string): Promise<boolean> {
    let known = this.packageCache.get(python);
    if (known === undefined) {
      known = await hasPackage(python);
      this.packageCache.set(python, known);
    }
    return known;
  }

  /** What would start now, without installing anything (source `install`: the install is still to make). */
  async peek(folder: vscode.WorkspaceFolder): Promise<ServerCommand & { source: Source; interpreter?: string }> {
    const setting = this.setting();
    const interpreter = setting ? undefined : await this.interpreter(folder);
    const layout = this.layout();
    const choice = chooseServer({
      setting,
      pythonExtension: interpreter,
      pythonExtensionHasPackage: interpreter ? await this.hasPackage(interpreter) : false,
      onPath: setting ? undefined : onPath('mcp-server-ide'),
      storagePython: layout.python,
      storageReady: storageReady(layout),
    });
    return { ...choice, interpreter };
  }

  /** What to start for `folder`, installing into global storage first when nothing else has the server
   * (once for all folders; a failed install shows its error and is not retried until a restart). */
  async ensure(folder: vscode.WorkspaceFolder): Promise<ServerCommand | undefined> {
    const choice = await this.peek(folder);
    if (choice.source !== 'install') return choice;
    this.install ??= this.runInstall(choice.interpreter);
    return this.install;
  }

  private async runInstall(interpreter: string | undefined): Promise<ServerCommand | undefined> {
    const layout = this.layout();
    const wheel = shippedWheel(this.context.extensionPath);
    this.log.info(`no server found: installing ${wheel ?? '(no wheel)'} into ${layout.dir}`);
    try {
      const found = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'MCP Server IDE: installing the server', cancellable: false },
        (progress) =>
          installServer({
            wheel,
            layout,
            basePythons: [interpreter ?? '', 'python3', 'python'],
            step: (message) => progress.report({ message }),
            log: (line) => this.log.info(`[install] ${line}`),
          }),
      );
      this.log.info(`the server is installed: ${found.command} ${found.args.join(' ')}`);
      return found;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (err instanceof InstallError && err.output) this.log.error(`[install] what the failed step printed:\n${err.output.slice(-16000)}`);
      this.log.error(`installing the server failed: ${message}`);
      void vscode.window.showErrorMessage(`MCP Server IDE: ${message}`, 'Show Log', 'Open Settings').then((pick) => {
        if (pick === 'Show Log') this.log.show();
        if (pick === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'mcpServerIde.server.command');
      });
      return undefined;
    }
  }
}
