import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chooseServer, InstallError, installServer, onPath, shippedWheel, storageLayout, storageReady } from '../src/install';

const none = { setting: '', pythonExtensionHasPackage: false, storagePython: '/s/venv/bin/python', storageReady: false };

test('the setting wins over everything', () => {
  const c = chooseServer({ ...none, setting: '/x/mcp-server-ide', pythonExtension: '/py', pythonExtensionHasPackage: true, onPath: '/bin/mcp-server-ide' });
  assert.deepEqual(c, { source: 'setting', command: '/x/mcp-server-ide', args: [] });
});

test("the Python extension's interpreter is used only when it has the package", () => {
  assert.deepEqual(chooseServer({ ...none, pythonExtension: '/py', pythonExtensionHasPackage: true }), {
    source: 'python-extension',
    command: '/py',
    args: ['-m', 'mcp_server_ide'],
  });
  assert.equal(chooseServer({ ...none, pythonExtension: '/py', onPath: '/bin/mcp-server-ide' }).source, 'path');
});

test('without the Python extension, PATH, then the own install (made when missing)', () => {
  assert.equal(chooseServer({ ...none, onPath: '/bin/mcp-server-ide' }).command, '/bin/mcp-server-ide');
  assert.deepEqual(chooseServer(none), { source: 'install', command: '/s/venv/bin/python', args: ['-m', 'mcp_server_ide'] });
  assert.equal(chooseServer({ ...none, storageReady: true }).source, 'storage');
});

function scratch(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'install-test-'));
}

function script(file: string, body: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

test('PATH lookup finds executables only; the wheel and the storage layout are per version', () => {
  const dir = scratch();
  try {
    script(path.join(dir, 'a', 'tool'), 'exit 0');
    fs.mkdirSync(path.join(dir, 'b', 'tool'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'c-tool'), '');
    assert.equal(onPath('tool', [path.join(dir, 'b'), path.join(dir, 'a')].join(path.delimiter)), path.join(dir, 'a', 'tool'));
    assert.equal(onPath('c-tool', dir), undefined); // not executable
    assert.equal(shippedWheel(dir), undefined);
    fs.mkdirSync(path.join(dir, 'dist', 'server'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'dist', 'server', 'mcp_server_ide-0.1.0-py3-none-any.whl'), '');
    const wheel = shippedWheel(dir);
    assert.equal(wheel, path.join(dir, 'dist', 'server', 'mcp_server_ide-0.1.0-py3-none-any.whl'));
    const layout = storageLayout('/g', wheel);
    assert.equal(layout.python, '/g/server/mcp_server_ide-0.1.0-py3-none-any/venv/bin/python');
    assert.equal(storageReady(layout), false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// Stand-ins for Python (shell scripts): the steps are real processes, their outcomes chosen here.
function fakePython(dir: string, venvStep: string, pipStep: string): string {
  const venvPython = script(path.join(dir, 'template', 'python'), `case "$*" in *"pip install"*) ${pipStep};; esac`);
  return script(
    path.join(dir, 'py', 'python3'),
    `case "$*" in
  *"import sys, venv"*) exit 0;;
  *"-m venv"*) ${venvStep}; mkdir -p "$3/bin" && cp "${venvPython}" "$3/bin/python";;
esac`,
  );
}

test('an install makes the environment, pip-installs the wheel, and marks it complete', async () => {
  const dir = scratch();
  try {
    const layout = storageLayout(path.join(dir, 'storage'), path.join(dir, 'w-1.0-py3-none-any.whl'));
    const steps: string[] = [];
    const found = await installServer({
      wheel: path.join(dir, 'w-1.0-py3-none-any.whl'),
      layout,
      basePythons: ['', path.join(dir, 'nothing-here'), fakePython(dir, 'true', 'echo Successfully installed w-1.0')],
      step: (m) => steps.push(m),
      log: () => {},
    });
    assert.deepEqual(found, { command: layout.python, args: ['-m', 'mcp_server_ide'] });
    assert.equal(storageReady(layout), true);
    assert.equal(steps.length, 2);
    assert.match(steps[1], /installing w-1\.0-py3-none-any\.whl/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a failed pip install is an error naming what to set, with what pip printed, and no marker', async () => {
  const dir = scratch();
  try {
    const layout = storageLayout(path.join(dir, 'storage'), path.join(dir, 'w-1.0-py3-none-any.whl'));
    const logged: string[] = [];
    await assert.rejects(
      installServer({
        wheel: path.join(dir, 'w-1.0-py3-none-any.whl'),
        layout,
        basePythons: [fakePython(dir, 'true', 'echo "ERROR: No matching distribution found for mcp==2.3.0" >&2; exit 1')],
        step: () => {},
        log: (line) => logged.push(line),
      }),
      (err: unknown) => {
        assert.ok(err instanceof InstallError);
        assert.match(err.message, /pip install of w-1\.0-py3-none-any\.whl failed \(exit 1/);
        assert.match(err.message, /mcpServerIde\.server\.command/);
        assert.match(err.output, /No matching distribution found for mcp==2\.3\.0/);
        return true;
      },
    );
    assert.ok(logged.some((l) => l.includes('No matching distribution')));
    assert.equal(storageReady(layout), false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('no usable Python, or no wheel in the .vsix, is a clear error', async () => {
  const dir = scratch();
  try {
    const layout = storageLayout(dir, undefined);
    const old = script(path.join(dir, 'old', 'python3'), 'exit 1'); // "Python 3.10": the version check fails
    await assert.rejects(installServer({ wheel: '/w.whl', layout, basePythons: [old], step: () => {}, log: () => {} }), /no Python 3\.11 or newer.*mcpServerIde\.server\.command/);
    await assert.rejects(installServer({ wheel: undefined, layout, basePythons: [old], step: () => {}, log: () => {} }), /no server wheel/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
