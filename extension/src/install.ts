// How the extension finds the server, and the install into its global storage when nothing else has
// it. No vscode import: the choice and the install steps are unit-tested (test/install.test.ts);
// src/finder.ts feeds them what VS Code knows (settings, the Python extension, the progress UI).

import * as child_process from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface ServerCommand {
  command: string;
  args: string[];
}

export type Source = 'setting' | 'python-extension' | 'path' | 'storage' | 'install';

export interface Candidates {
  /** `mcpServerIde.server.command` (trimmed; empty when unset). */
  setting: string;
  /** The Python extension's selected interpreter, when that extension is installed and has one. */
  pythonExtension?: string;
  /** Whether that interpreter can `import mcp_server_ide`. */
  pythonExtensionHasPackage: boolean;
  /** `mcp-server-ide` on PATH, if any. */
  onPath?: string;
  /** The interpreter of the extension's own install (global storage), and whether it is complete. */
  storagePython: string;
  storageReady: boolean;
}

/** Which server to start, in this order: the setting; the Python extension's interpreter when it has the
 * package; `mcp-server-ide` on PATH; the extension's own install (made first when it is missing:
 * source `install`). */
export function chooseServer(c: Candidates): ServerCommand & { source: Source } {
  if (c.setting) return { source: 'setting', command: c.setting, args: [] };
  if (c.pythonExtension && c.pythonExtensionHasPackage) {
    return { source: 'python-extension', command: c.pythonExtension, args: ['-m', 'mcp_server_ide'] };
  }
  if (c.onPath) return { source: 'path', command: c.onPath, args: [] };
  return { source: c.storageReady ? 'storage' : 'install', command: c.storagePython, args: ['-m', 'mcp_server_ide'] };
}

/** The server wheel shipped inside the .vsix (`dist/server/*.whl`), if any. */
export function shippedWheel(extensionPath: string): string | undefined {
  const dir = path.join(extensionPath, 'dist', 'server');
  try {
    const wheels = fs.readdirSync(dir).filter((n) => n.endsWith('.whl')).sort();
    return wheels.length ? path.join(dir, wheels[wheels.length - 1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Where the install of `wheel` lives in `storage`: one folder a wheel (so a new version installs anew). */
export function storageLayout(storage: string, wheel: string | undefined): { dir: string; python: string; marker: string } {
  const name = wheel ? path.basename(wheel, '.whl') : 'mcp_server_ide';
  const dir = path.join(storage, 'server', name);
  const bin = process.platform === 'win32' ? path.join(dir, 'venv', 'Scripts', 'python.exe') : path.join(dir, 'venv', 'bin', 'python');
  return { dir, python: bin, marker: path.join(dir, 'installed') };
}

export function storageReady(layout: { python: string; marker: string }): boolean {
  return fs.existsSync(layout.marker) && fs.existsSync(layout.python);
}

/** The first executable called `name` on `pathVar`. */
export function onPath(name: string, pathVar: string = process.env.PATH ?? ''): string | undefined {
  for (const dir of pathVar.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Run a program; its exit code and what it printed (stdout and stderr interleaved). */
export function run(command: string, args: string[], timeoutMs: number, onLine: (line: string) => void = () => {}): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    let output = '';
    let partial = '';
    let child: child_process.ChildProcess;
    try {
      child = child_process.spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PIP_NO_INPUT: '1' } });
    } catch (err) {
      resolve({ code: -1, output: String(err) });
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const take = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      output = (output + text).slice(-256 * 1024);
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) onLine(line);
    };
    child.stdout?.on('data', take);
    child.stderr?.on('data', take);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: -1, output: output + String(err) });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (partial.trim()) onLine(partial);
      resolve({ code: code ?? -1, output: signal ? `${output}\n(stopped: ${signal})` : output });
    });
  });
}

/** Whether `python` can import the server package. */
export async function hasPackage(python: string): Promise<boolean> {
  return (await run(python, ['-c', 'import mcp_server_ide'], 30000)).code === 0;
}

async function isPython311(python: string): Promise<boolean> {
  return (await run(python, ['-c', 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 11) else 1)'], 30000)).code === 0;
}

export const WHAT_TO_SET =
  'Set `mcpServerIde.server.command` to an installed `mcp-server-ide` (e.g. /path/to/.venv/bin/mcp-server-ide), ' +
  'or select a Python interpreter that has the package with the Python extension.';

/** An install that failed: `message` says which step and what to set; `output` is what the step printed. */
export class InstallError extends Error {
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(message);
  }
}

/** Make `layout.dir/venv` with the first Python 3.11+ of `basePythons` and pip-install `wheel` into it
 * (its dependencies come from the package index pip is configured with). `step` reports progress,
 * `log` every line the tools print. Resolves to the server command; rejects with an InstallError. */
export async function installServer(opts: {
  wheel: string | undefined;
  layout: { dir: string; python: string; marker: string };
  basePythons: string[];
  step: (message: string) => void;
  log: (line: string) => void;
  timeoutMs?: number;
}): Promise<ServerCommand> {
  const { wheel, layout, log, step } = opts;
  const timeout = opts.timeoutMs ?? 15 * 60 * 1000;
  if (!wheel) throw new InstallError(`this .vsix has no server wheel (dist/server/*.whl) to install. ${WHAT_TO_SET}`, '');
  let base: string | undefined;
  for (const candidate of opts.basePythons) {
    if (candidate && (await isPython311(candidate))) {
      base = candidate;
      break;
    }
  }
  if (!base) {
    throw new InstallError(`no Python 3.11 or newer with venv was found (tried ${opts.basePythons.filter(Boolean).join(', ')}). ${WHAT_TO_SET}`, '');
  }
  fs.rmSync(layout.dir, { recursive: true, force: true });
  fs.mkdirSync(layout.dir, { recursive: true });
  step(`creating a Python environment (${base})`);
  log(`install: ${base} -m venv ${path.join(layout.dir, 'venv')}`);
  const venv = await run(base, ['-m', 'venv', path.join(layout.dir, 'venv')], timeout, log);
  if (venv.code !== 0) throw new InstallError(`creating the server's Python environment with ${base} failed (exit ${venv.code}). ${WHAT_TO_SET}`, venv.output);
  step(`installing ${path.basename(wheel)} and its dependencies with pip`);
  log(`install: ${layout.python} -m pip install ${wheel}`);
  const pip = await run(layout.python, ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', wheel], timeout, log);
  if (pip.code !== 0) throw new InstallError(`pip install of ${path.basename(wheel)} failed (exit ${pip.code}; its output is in the log). ${WHAT_TO_SET}`, pip.output);
  fs.writeFileSync(layout.marker, `${path.basename(wheel)}\n`);
  return { command: layout.python, args: ['-m', 'mcp_server_ide'] };
}
