// Files the server reads and writes while they are open in VS Code: an unsaved buffer's text, a
// tool's edit applied to that buffer (a WorkspaceEdit: Ctrl+Z undoes it, nothing is saved), editors
// reloaded after the server changed their files on disk, and VS Code's diagnostics. Thin on purpose:
// the server decides; positions travel 0-based with code-point characters (diagnostics: UTF-16, as
// the server's problems are).

import * as vscode from 'vscode';
import { utf16Column } from './columns';
import { BridgeError, Handler } from './protocol';
import { diagnosticOut, MAX_DIAGNOSTICS, WireDiagnostic } from './diagnostics';

/** The open document of the file `path`, if VS Code has one. */
function docOf(path: string): vscode.TextDocument | undefined {
  return vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === path && !d.isClosed);
}

function pathParam(value: unknown): string {
  if (typeof value !== 'string' || !value) throw new BridgeError('invalid', 'bridge: path must be a non-empty string');
  return value;
}

function posIn(doc: vscode.TextDocument, p: unknown): vscode.Position {
  const q = (p ?? {}) as { line?: unknown; character?: unknown };
  const line = Math.min(Math.max(Number(q.line) || 0, 0), doc.lineCount - 1);
  return new vscode.Position(line, utf16Column(doc.lineAt(line).text, Number(q.character ?? 0)));
}

function autoReload(): boolean {
  return vscode.workspace.getConfiguration('mcpServerIde').get<boolean>('autoReloadModifiedFiles', true);
}

const RELOAD_GRACE_MS = 1500;

/** VS Code reloads a clean editor itself when its file watcher sees the change; if it has not after a
 * grace period (an excluded folder, a slow watcher), the active editor is reverted (a clean document:
 * revert only re-reads the file). A document with unsaved changes is never touched: VS Code's own
 * conflict flow ("the file is newer", compare or overwrite) meets the person when they save. */
function reloadSoon(doc: vscode.TextDocument, log: (line: string) => void): void {
  const seen = doc.version;
  setTimeout(async () => {
    if (doc.isClosed || doc.isDirty || doc.version !== seen) return; // reloaded, or the person typed
    let disk: string;
    try {
      disk = new TextDecoder().decode(await vscode.workspace.fs.readFile(doc.uri)).replace(/^\uFEFF/, '');
    } catch {
      return; // gone meanwhile: VS Code shows it as deleted
    }
    if (disk.replace(/\r\n/g, '\n') === doc.getText().replace(/\r\n/g, '\n')) return;
    const active = vscode.window.activeTextEditor;
    if (active?.document !== doc || doc.isDirty) return; // only the active editor can be reverted by command
    log(`reloading ${doc.uri.fsPath}: VS Code had not noticed the server's change`);
    await vscode.commands.executeCommand('workbench.action.files.revert');
  }, RELOAD_GRACE_MS);
}

export function fileHandlers(log: (line: string) => void = () => {}): Record<string, Handler> {
  return {
    /** The unsaved text of `path` (null when it is not open or has no unsaved changes). */
    buffer: (params) => {
      const doc = docOf(pathParam(params.path));
      if (!doc || !doc.isDirty) return null;
      return { text: doc.getText(), crlf: doc.eol === vscode.EndOfLine.CRLF, version: doc.version };
    },

    /** Replace `start`..`end` of the unsaved buffer of `path` with `text`, if it is still `version`. */
    editBuffer: async (params) => {
      const path = pathParam(params.path);
      const doc = docOf(path);
      if (!doc) throw new BridgeError('conflict', `conflict: ${path} was closed in VS Code meanwhile; read it again and retry`);
      if (typeof params.version === 'number' && doc.version !== params.version) {
        throw new BridgeError('conflict', `conflict: ${path} changed in VS Code while the edit was prepared; read it again and retry`);
      }
      const lf = String(params.text ?? '').replace(/\r\n/g, '\n');
      const text = doc.eol === vscode.EndOfLine.CRLF ? lf.replace(/\n/g, '\r\n') : lf;
      const edit = new vscode.WorkspaceEdit();
      edit.replace(doc.uri, new vscode.Range(posIn(doc, params.start), posIn(doc, params.end)), text);
      if (!(await vscode.workspace.applyEdit(edit))) {
        throw new BridgeError('conflict', `conflict: VS Code refused the edit of ${path}'s unsaved buffer; read it again and retry`);
      }
      return { version: doc.version, dirty: doc.isDirty };
    },

    /** The server changed these files on disk: with `autoReloadModifiedFiles`, make sure their clean
     * editors show the new text; editors with unsaved changes are left to VS Code's conflict flow. */
    filesChanged: (params) => {
      const paths = Array.isArray(params.paths) ? params.paths.filter((p): p is string => typeof p === 'string') : [];
      const out = { reloading: [] as string[], unsaved: [] as string[], off: !autoReload() };
      for (const path of paths) {
        const doc = docOf(path);
        if (!doc) continue;
        if (doc.isDirty) {
          out.unsaved.push(path);
        } else if (!out.off) {
          out.reloading.push(path);
          reloadSoon(doc, log);
        }
      }
      return out;
    },

    /** VS Code's diagnostics of files inside the workspace folders (at most MAX_DIAGNOSTICS). */
    diagnostics: () => {
      const out: { path: string; problems: WireDiagnostic[] }[] = [];
      let count = 0;
      for (const [uri, found] of vscode.languages.getDiagnostics()) {
        if (uri.scheme !== 'file' || found.length === 0 || !vscode.workspace.getWorkspaceFolder(uri)) continue;
        const problems = found.slice(0, Math.max(0, MAX_DIAGNOSTICS - count)).map(diagnosticOut);
        count += problems.length;
        out.push({ path: uri.fsPath, problems });
        if (count >= MAX_DIAGNOSTICS) break;
      }
      return out;
    },
  };
}
