import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import * as os from 'node:os';
import { BridgeError, BridgeServer, newToken, privateSocketPath, stableSocketPath, tokenMatches } from '../src/protocol';

function session(socketPath: string): { send(obj: unknown): void; next(): Promise<any>; closed: Promise<void>; end(): void } {
  const sock = net.connect(socketPath);
  let buffer = '';
  const waiting: ((v: any) => void)[] = [];
  const lines: any[] = [];
  sock.setEncoding('utf8');
  sock.on('data', (chunk: string) => {
    buffer += chunk;
    let i: number;
    while ((i = buffer.indexOf('\n')) >= 0) {
      const value = JSON.parse(buffer.slice(0, i));
      buffer = buffer.slice(i + 1);
      const w = waiting.shift();
      if (w) w(value);
      else lines.push(value);
    }
  });
  const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
  return {
    send: (obj) => sock.write(JSON.stringify(obj) + '\n'),
    next: () => (lines.length ? Promise.resolve(lines.shift()) : new Promise((resolve) => waiting.push(resolve))),
    closed,
    end: () => sock.destroy(),
  };
}

async function withServer(fn: (p: string, token: string) => Promise<void>): Promise<void> {
  const token = newToken();
  const server = new BridgeServer(token, {
    echo: (params) => params,
    fail: () => {
      throw new BridgeError('conflict', 'conflict: nope');
    },
  });
  const p = privateSocketPath();
  await server.listen(p);
  try {
    await fn(p, token);
  } finally {
    server.close();
  }
  assert.equal(fs.existsSync(path.dirname(p)), false);
}

test('tokens are long and random, compared exactly', () => {
  const t = newToken();
  assert.equal(t.length, 64);
  assert.notEqual(t, newToken());
  assert.ok(tokenMatches(t, t));
  assert.ok(!tokenMatches(t, t.slice(1)));
  assert.ok(!tokenMatches(t, undefined));
});

test('the socket is in a 0700 folder and is itself 0600', async () => {
  await withServer(async (p) => {
    assert.equal(fs.statSync(path.dirname(p)).mode & 0o777, 0o700);
    assert.equal(fs.statSync(p).mode & 0o777, 0o600);
  });
});

test('hello with the token, then requests are answered in order', async () => {
  await withServer(async (p, token) => {
    const s = session(p);
    s.send({ id: 0, method: 'hello', params: { token } });
    assert.equal((await s.next()).result.ok, true);
    s.send({ id: 1, method: 'echo', params: { a: 1 } });
    s.send({ id: 2, method: 'fail', params: {} });
    s.send({ id: 3, method: 'nope', params: {} });
    assert.deepEqual(await s.next(), { id: 1, result: { a: 1 } });
    assert.deepEqual(await s.next(), { id: 2, error: { message: 'conflict: nope', kind: 'conflict' } });
    assert.equal((await s.next()).error.kind, 'invalid');
    s.end();
  });
});

test('a wrong token, a missing one, or a request before hello is refused and cut off', async () => {
  await withServer(async (p, token) => {
    for (const first of [
      { id: 0, method: 'hello', params: { token: token.replace(/.$/, token.endsWith('0') ? '1' : '0') } },
      { id: 0, method: 'hello', params: {} },
      { id: 0, method: 'echo', params: { token } },
    ]) {
      const s = session(p);
      s.send(first);
      assert.equal((await s.next()).error.kind, 'refused');
      await s.closed;
    }
  });
});

test('a stable socket path is the same for a key, in a private folder, and refuses a folder others can enter', () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'stable-'));
  try {
    const a = stableSocketPath('window-1', base);
    assert.equal(a, stableSocketPath('window-1', base));
    assert.notEqual(a, stableSocketPath('window-2', base));
    assert.equal(fs.statSync(path.dirname(a)).mode & 0o777, 0o700);
    fs.chmodSync(path.dirname(a), 0o755);
    assert.throws(() => stableSocketPath('window-1', base), /not a private folder/);
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
});

test('listening again on the path of a dead host replaces its stale socket', async () => {
  const p = privateSocketPath();
  const first = new BridgeServer('t', {});
  await first.listen(p);
  const second = new BridgeServer('t', {});
  await second.listen(p); // the first one's socket file is still there
  second.close();
  first.close();
});
