// What the server may ask VS Code to run, decided without VS Code (no vscode import: unit-tested):
// which commands are refused unless the person allows them in `mcpServerIde.actions.allow`, the
// consent asked before a task or debug configuration runs in Restricted Mode, and how a command's
// result is made JSON (bounded).

export const ALLOW_SETTING = 'mcpServerIde.actions.allow';

/** Commands that close or reload the window, install or remove extensions, change workspace trust
 * or write settings. An entry ending in `*` is a prefix. */
export const DENIED: readonly string[] = [
  'workbench.action.closeWindow',
  'workbench.action.quit',
  'workbench.action.reloadWindow',
  'workbench.action.closeFolder',
  'workbench.action.closeWorkspace',
  'workbench.action.restartExtensionHost',
  'workbench.extensions.uninstall*',
  'workbench.extensions.installExtension',
  'workbench.extensions.action.uninstall*',
  'workbench.extensions.action.install*',
  'workbench.extensions.action.disable*',
  'workbench.extensions.action.enable*',
  'workbench.trust.*',
  'workbench.userDataSync.*',
  'workbench.action.toggleAutoSave',
  'workbench.action.selectTheme',
  'workbench.action.selectIconTheme',
  'workbench.action.selectProductIconTheme',
  'workbench.action.toggleLightDarkThemes',
  'workbench.action.setLogLevel',
  'workbench.action.configureLocale',
  'editor.action.toggleMinimap',
  'editor.action.toggleRenderWhitespace',
  'editor.action.toggleStickyScroll',
  'editor.action.toggleWordWrap',
  'mcpServerIde.*',
];

function matches(pattern: string, id: string): boolean {
  return pattern.endsWith('*') ? id.startsWith(pattern.slice(0, -1)) : id === pattern;
}

/** Why `id` is refused (a message naming the setting), or undefined when it may run. */
export function refusal(id: string, allowed: readonly string[]): string | undefined {
  const rule = DENIED.find((p) => matches(p, id));
  if (rule === undefined || allowed.some((p) => matches(p, id))) return undefined;
  return (
    `refused: ${id} closes the window, changes extensions, workspace trust or settings (rule ${JSON.stringify(rule)}); ` +
    `the person can allow it by adding ${JSON.stringify(id)} to the VS Code setting ${ALLOW_SETTING}`
  );
}

/** Commands that run the workspace's code (tasks, debugging, tests, the terminal): in an untrusted
 * workspace they run only after the person consents, like `run_configuration`. */
export const RUNS_CODE: readonly string[] = [
  'workbench.action.tasks.*',
  'workbench.action.debug.*',
  'debug.*',
  'testing.*',
  'workbench.action.terminal.runActiveFile',
  'workbench.action.terminal.runSelectedText',
  'workbench.action.terminal.runRecentCommand',
  'workbench.action.terminal.sendSequence',
  'python.execInTerminal*',
  'python.execSelectionInTerminal',
  'jupyter.run*',
  'npm.runScript*',
];

/** Whether `id` runs the workspace's code (see RUNS_CODE). */
export function runsCode(id: string): boolean {
  return RUNS_CODE.some((p) => matches(p, id));
}

export type Consent = 'yes' | 'no' | 'timeout';

/** Ask (a modal in VS Code) and wait at most `timeoutMs`: 'yes' only when the answer is `accept`.
 * An answer after the timeout is ignored: the caller was told "refused" already. */
export function askConsent(ask: () => PromiseLike<string | undefined>, accept: string, timeoutMs: number): Promise<Consent> {
  return new Promise((done) => {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      done('timeout');
    }, timeoutMs);
    Promise.resolve(ask()).then(
      (answer) => {
        if (settled) return;
        clearTimeout(timer);
        done(answer === accept ? 'yes' : 'no');
      },
      () => {
        if (settled) return;
        clearTimeout(timer);
        done('no');
      },
    );
  });
}

export const MAX_RESULT = 64 * 1024;

/** A command's result as JSON data, or a note saying why not (not serialisable, or over `max` bytes). */
export function jsonResult(value: unknown, max: number = MAX_RESULT): { result?: unknown; note?: string } {
  if (value === undefined || value === null) return {};
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    return { note: 'the command returned a value that is not JSON-serialisable' };
  }
  if (text === undefined) return { note: 'the command returned a value that is not JSON-serialisable' };
  if (text.length > max) return { note: `the command's result is ${text.length} bytes of JSON, over the ${max}-byte limit` };
  return { result: JSON.parse(text) };
}

/** "Category: Title" from a `contributes.commands` entry (titles may be localised objects). */
export function commandTitle(entry: { title?: unknown; category?: unknown }): string | undefined {
  const text = (v: unknown): string | undefined =>
    typeof v === 'string' ? v : v && typeof v === 'object' && typeof (v as { value?: unknown }).value === 'string' ? (v as { value: string }).value : undefined;
  const title = text(entry.title);
  if (!title) return undefined;
  const category = text(entry.category);
  return category ? `${category}: ${title}` : title;
}
