// The bridge's wire protocol: JSON lines over a private Unix socket, a token first.
// The server (the client of this socket) sends {"id", "method", "params"}; the first request must be
// "hello" with the token the extension put in the server's environment, or the connection is cut.
// Answers are {"id", "result"} or {"id", "error": {"message", "kind"}}. No vscode import here: the
// node unit tests exercise this module against a real socket.

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

export type Kind = 'invalid' | 'refused' | 'not_found' | 'conflict' | 'unavailable' | 'too_large';

/** A failure a handler reports to the server; `kind` becomes the tool failure's kind there. */
export class BridgeError extends Error {
  constructor(readonly kind: Kind, message: string) {
    super(message);
  }
}

export type Handler = (params: Record<string, unknown>) => unknown;

export const MAX_LINE = 16 * 1024 * 1024;

/** A random token (256 bits, hex). */
export function newToken(): string {
  return crypto.randomBytes(32).toString('hex');
}

/** Whether `given` is `token`, compared in constant time. */
export function tokenMatches(token: string, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(token, 'utf8');
  const b = Buffer.from(given, 'utf8');
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** A socket path in a fresh folder only this user can enter (0700). */
export function privateSocketPath(base: string = os.tmpdir()): string {
  const dir = fs.mkdtempSync(path.join(base, 'mcp-ide-'));
  fs.chmodSync(dir, 0o700);
  return path.join(dir, 'bridge.sock');
}

/** The same socket path every time for `key` (a window's workspace), in this user's private folder
 * `mcp-ide-<uid>` of `base`: a restarted extension host listens where its servers reconnect. The
 * folder must be a real folder (not a link) owned by this user with no access for others, or this
 * throws rather than use a folder someone else prepared. */
export function stableSocketPath(key: string, base: string = os.tmpdir()): string {
  const uid = process.getuid?.() ?? 0;
  const dir = path.join(base, `mcp-ide-${uid}`);
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const st = fs.lstatSync(dir);
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) {
    throw new Error(`refused: ${dir} is not a private folder of this user (a directory, owner ${uid}, mode 0700)`);
  }
  const name = crypto.createHash('sha256').update(key).digest('hex').slice(0, 16);
  return path.join(dir, `${name}.sock`);
}

/** Answers the server's requests on a Unix socket, after a `hello` with the right token. */
export class BridgeServer {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  socketPath = '';

  constructor(
    private readonly token: string,
    private readonly handlers: Record<string, Handler>,
    private readonly info: Record<string, unknown> = {},
    private readonly log: (line: string) => void = () => {},
  ) {}

  /** Listen on `socketPath` (its folder must exist and be private); the socket file is 0600. */
  listen(socketPath: string): Promise<void> {
    this.socketPath = socketPath;
    try {
      if (fs.lstatSync(socketPath).isSocket()) fs.unlinkSync(socketPath); // left by a host that died
    } catch {
      // nothing there
    }
    const server = net.createServer((socket) => this.serve(socket));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        fs.chmodSync(socketPath, 0o600);
        resolve();
      });
    });
  }

  /** Stop listening, cut every connection, remove the socket (and its folder when that is empty). */
  close(): void {
    for (const socket of this.sockets) socket.destroy();
    this.server?.close();
    if (this.socketPath) {
      fs.rmSync(this.socketPath, { force: true });
      try {
        fs.rmdirSync(path.dirname(this.socketPath));
      } catch {
        // other windows' sockets are still there
      }
    }
  }

  get connections(): number {
    return this.sockets.size;
  }

  private serve(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let authenticated = false;
    let buffer = '';
    // Answers go out in request order: the server sends one request at a time anyway.
    let chain: Promise<void> = Promise.resolve();
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.length > MAX_LINE) {
        socket.destroy();
        return;
      }
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        let request: { id?: unknown; method?: unknown; params?: unknown };
        try {
          request = JSON.parse(line);
        } catch {
          socket.destroy();
          return;
        }
        const id = request.id;
        if (!authenticated) {
          const params = (request.params ?? {}) as Record<string, unknown>;
          if (request.method === 'hello' && tokenMatches(this.token, params.token)) {
            authenticated = true;
            this.log(`bridge: server pid ${String(params.pid)} connected`);
            socket.write(JSON.stringify({ id, result: { ok: true, ...this.info } }) + '\n');
            continue;
          }
          this.log('bridge: refused a connection without the right token');
          socket.end(JSON.stringify({ id, error: { message: 'refused: wrong or missing bridge token', kind: 'refused' } }) + '\n');
          socket.destroy();
          return;
        }
        chain = chain.then(() => this.answer(socket, id, request.method, request.params));
      }
    });
  }

  private async answer(socket: net.Socket, id: unknown, method: unknown, params: unknown): Promise<void> {
    let reply: unknown;
    const handler = typeof method === 'string' && Object.hasOwn(this.handlers, method) ? this.handlers[method] : undefined;
    if (handler === undefined) {
      reply = { id, error: { message: `unknown bridge method ${JSON.stringify(method)}`, kind: 'invalid' } };
    } else {
      try {
        const result = await handler((params ?? {}) as Record<string, unknown>);
        reply = { id, result: result ?? null };
      } catch (err) {
        const kind = err instanceof BridgeError ? err.kind : 'unavailable';
        const message = err instanceof Error ? err.message : String(err);
        reply = { id, error: { message, kind } };
      }
    }
    if (!socket.destroyed) socket.write(JSON.stringify(reply) + '\n');
  }
}
