// The bridge's handlers: what the server asks of VS Code. Thin on purpose: the server decides,
// these only read or change the editor. Positions travel 0-based with code-point characters.

import * as vscode from 'vscode';
import { codePointColumn, utf16Column } from './columns';
import { BridgeError, Handler } from './protocol';

interface Pos {
  line: number;
  character: number;
}
interface Sel {
  anchor: Pos;
  active: Pos;
}

function posOut(doc: vscode.TextDocument, p: vscode.Position): Pos {
  return { line: p.line, character: codePointColumn(doc.lineAt(p.line).text, p.character) };
}

function posIn(doc: vscode.TextDocument, p: unknown): vscode.Position {
  const q = (p ?? {}) as Partial<Pos>;
  const line = Math.min(Math.max(Number(q.line) || 0, 0), doc.lineCount - 1);
  return new vscode.Position(line, utf16Column(doc.lineAt(line).text, Number(q.character ?? 0)));
}

function selOut(doc: vscode.TextDocument, s: vscode.Selection): Sel {
  return { anchor: posOut(doc, s.anchor), active: posOut(doc, s.active) };
}

function fileEditor(): vscode.TextEditor | undefined {
  const editor = vscode.window.activeTextEditor;
  return editor && editor.document.uri.scheme === 'file' ? editor : undefined;
}

function textTabs(): { tab: vscode.Tab; uri: vscode.Uri }[] {
  const out: { tab: vscode.Tab; uri: vscode.Uri }[] = [];
  for (const group of vscode.window.tabGroups.all) {
    for (const tab of group.tabs) {
      if (tab.input instanceof vscode.TabInputText && tab.input.uri.scheme === 'file') out.push({ tab, uri: tab.input.uri });
    }
  }
  return out;
}

function str(value: unknown, name: string): string {
  if (typeof value !== 'string' || !value) throw new BridgeError('invalid', `bridge: ${name} must be a non-empty string`);
  return value;
}

/** The editor showing `path` (the active one first), or a clear failure. */
function editorOf(path: string): vscode.TextEditor {
  const active = fileEditor();
  if (active && active.document.uri.fsPath === path) return active;
  const visible = vscode.window.visibleTextEditors.find((e) => e.document.uri.fsPath === path);
  if (!visible) throw new BridgeError('not_found', `no active editor: ${path} is no longer the active editor in VS Code`);
  return visible;
}

function checkVersion(doc: vscode.TextDocument, version: unknown): void {
  if (typeof version === 'number' && doc.version !== version) {
    throw new BridgeError('conflict', `conflict: ${doc.uri.fsPath} changed in VS Code while the edit was prepared; read it again and retry`);
  }
}

function eolText(doc: vscode.TextDocument, text: string): string {
  const lf = text.replace(/\r\n/g, '\n');
  return doc.eol === vscode.EndOfLine.CRLF ? lf.replace(/\n/g, '\r\n') : lf;
}

async function apply(edit: vscode.WorkspaceEdit, doc: vscode.TextDocument, save: unknown): Promise<void> {
  if (!(await vscode.workspace.applyEdit(edit))) {
    throw new BridgeError('conflict', `VS Code refused the edit of ${doc.uri.fsPath}`);
  }
  if (save === true && !(await doc.save())) {
    throw new BridgeError('unavailable', `the edit of ${doc.uri.fsPath} is in VS Code's buffer but saving it failed`);
  }
}

export function editorHandlers(): Record<string, Handler> {
  return {
    state: () => {
      const dirty = new Map(vscode.workspace.textDocuments.map((d) => [d.uri.toString(), d]));
      return {
        active: fileEditor()?.document.uri.fsPath ?? null,
        open: textTabs().map(({ tab, uri }) => ({
          path: uri.fsPath,
          dirty: tab.isDirty,
          languageId: dirty.get(uri.toString())?.languageId,
        })),
        visible: vscode.window.visibleTextEditors.filter((e) => e.document.uri.scheme === 'file').map((e) => e.document.uri.fsPath),
      };
    },

    active: () => {
      const editor = fileEditor();
      if (!editor) return null;
      const doc = editor.document;
      return {
        path: doc.uri.fsPath,
        text: doc.getText(),
        dirty: doc.isDirty,
        languageId: doc.languageId,
        version: doc.version,
        selection: selOut(doc, editor.selection),
      };
    },

    open: async (params) => {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(str(params.path, 'path')));
      const editor = await vscode.window.showTextDocument(doc, { preview: false });
      if (params.selection) {
        const s = params.selection as Sel;
        editor.selection = new vscode.Selection(posIn(doc, s.anchor), posIn(doc, s.active));
        editor.revealRange(editor.selection, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      }
      return { selection: selOut(doc, editor.selection) };
    },

    close: async (params) => {
      const path = typeof params.path === 'string' && params.path ? params.path : fileEditor()?.document.uri.fsPath;
      if (!path) return { closed: false };
      const tabs = textTabs().filter(({ uri }) => uri.fsPath === path);
      if (tabs.length === 0) return { closed: false };
      if (tabs.some(({ tab }) => tab.isDirty)) {
        throw new BridgeError('conflict', `refused: ${path} has unsaved changes in VS Code; save or revert them there first (closing would ask the person)`);
      }
      await vscode.window.tabGroups.close(tabs.map(({ tab }) => tab));
      return { closed: true };
    },

    replaceSelection: async (params) => {
      const editor = editorOf(str(params.path, 'path'));
      const doc = editor.document;
      checkVersion(doc, params.version);
      const text = eolText(doc, String(params.text ?? ''));
      const range = new vscode.Range(editor.selection.start, editor.selection.end);
      const start = doc.offsetAt(range.start);
      const edit = new vscode.WorkspaceEdit();
      edit.replace(doc.uri, range, text);
      await apply(edit, doc, params.save);
      const cursor = doc.positionAt(start + text.length);
      editor.selection = new vscode.Selection(cursor, cursor);
      return { selection: selOut(doc, editor.selection) };
    },

    replaceText: async (params) => {
      const editor = editorOf(str(params.path, 'path'));
      const doc = editor.document;
      checkVersion(doc, params.version);
      const whole = new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length));
      const edit = new vscode.WorkspaceEdit();
      edit.replace(doc.uri, whole, eolText(doc, String(params.text ?? '')));
      await apply(edit, doc, params.save);
      return { selection: selOut(doc, editor.selection) };
    },

    breakpoints: () =>
      vscode.debug.breakpoints
        .filter((b): b is vscode.SourceBreakpoint => b instanceof vscode.SourceBreakpoint)
        .map((b) => ({ path: b.location.uri.fsPath, line: b.location.range.start.line, enabled: b.enabled })),

    toggleBreakpoint: (params) => {
      const path = str(params.path, 'path');
      const line = Number(params.line);
      if (!Number.isInteger(line) || line < 0) throw new BridgeError('invalid', 'bridge: line must be a non-negative integer');
      const here = vscode.debug.breakpoints.filter(
        (b): b is vscode.SourceBreakpoint =>
          b instanceof vscode.SourceBreakpoint && b.location.uri.fsPath === path && b.location.range.start.line === line,
      );
      if (here.length > 0) {
        vscode.debug.removeBreakpoints(here);
        return { added: false };
      }
      vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(vscode.Uri.file(path), new vscode.Position(line, 0)))]);
      return { added: true };
    },

    clearBreakpoints: (params) => {
      const under = Array.isArray(params.under) ? params.under.filter((p): p is string => typeof p === 'string') : [];
      const inside = (p: string) => under.some((root) => p === root || p.startsWith(root.endsWith('/') ? root : root + '/'));
      const gone = vscode.debug.breakpoints.filter(
        (b): b is vscode.SourceBreakpoint => b instanceof vscode.SourceBreakpoint && inside(b.location.uri.fsPath),
      );
      vscode.debug.removeBreakpoints(gone);
      return { count: gone.length };
    },
  };
}
