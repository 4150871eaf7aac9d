// What the server needs to know of one VS Code debug session (a root session and its children, as
// js-debug makes one child session a node process): the Debug Adapter Protocol events a tracker saw,
// numbered so the server reads them from a cursor (long-polling `debug.events`), and the state they
// imply. No vscode import here: extension/test/debug.test.ts exercises it as it is.

export interface DapEvent {
  seq: number;
  event: string;
  body: Record<string, unknown>;
}

export type RunState = 'running' | 'stopped' | 'ended';

export const MAX_EVENTS = 400;
/** Characters of one output event kept (a program printing megabytes stays bounded here). */
export const OUTPUT_CHARS = 4000;
/** Events that move the server's view of a session; others (module, loadedSource, process...) are left out. */
export const FORWARDED = new Set(['stopped', 'continued', 'exited', 'terminated', 'output', 'breakpoint']);
/** Requests that resume the program: the person pressing Continue or Step in VS Code's toolbar. */
export const RESUMING = new Set(['continue', 'next', 'stepIn', 'stepOut', 'stepBack', 'reverseContinue', 'goto', 'restartFrame']);

const EXITED = /Process exited with code (-?\d+)/;

export interface Answer {
  events: DapEvent[];
  next: number;
  state: RunState;
  exitCode?: number;
  dropped?: number;
}

export class Run {
  events: DapEvent[] = [];
  seq = 0;
  state: RunState = 'running';
  exitCode: number | undefined;
  private waiters: (() => void)[] = [];

  constructor(
    readonly id: string,
    readonly name: string,
    readonly type: string,
    readonly ours: boolean,
  ) {}

  /** Record one event (cut to size) and wake the waiting readers. */
  push(event: string, body: Record<string, unknown> = {}): void {
    if (this.state === 'ended' && event !== 'terminated') return;
    let kept = body;
    if (event === 'output') {
      const text = String(body.output ?? '');
      const found = EXITED.exec(text);
      if (found && this.exitCode === undefined) this.exitCode = Number(found[1]);
      kept = { ...body, output: text.length > OUTPUT_CHARS ? `${text.slice(0, OUTPUT_CHARS)}…(+${text.length - OUTPUT_CHARS} chars)\n` : text };
      delete kept.variablesReference;
    } else if (event === 'exited' && typeof body.exitCode === 'number') {
      this.exitCode = body.exitCode;
    } else if (event === 'stopped') {
      this.state = 'stopped';
    } else if (event === 'continued') {
      this.state = 'running';
    } else if (event === 'terminated') {
      if (this.state === 'ended') return;
      this.state = 'ended';
    }
    this.events.push({ seq: ++this.seq, event, body: kept });
    if (this.events.length > MAX_EVENTS) this.events.splice(0, this.events.length - MAX_EVENTS);
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** The events after `cursor` (0: from the start), the next cursor, the state. */
  since(cursor: number): Answer {
    const events = this.events.filter((e) => e.seq > cursor);
    const first = this.events.length ? this.events[0].seq : this.seq + 1;
    const out: Answer = { events, next: this.seq, state: this.state };
    if (this.exitCode !== undefined) out.exitCode = this.exitCode;
    if (first > cursor + 1 && this.seq > cursor) out.dropped = first - cursor - 1;
    return out;
  }

  /** `since(cursor)` once there is something after it, or after `ms`. */
  wait(cursor: number, ms: number): Promise<Answer> {
    if (this.seq > cursor || ms <= 0) return Promise.resolve(this.since(cursor));
    return new Promise((done) => {
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        done(this.since(cursor));
      };
      const timer = setTimeout(finish, ms);
      this.waiters.push(finish);
    });
  }
}

/** setBreakpoints requests in flight, by seq, so their answers can be reported with what was asked. */
export class BreakpointAnswers {
  private asked = new Map<number, { path: string; breakpoints: unknown[] }>();

  request(message: { seq?: unknown; command?: unknown; arguments?: unknown }): void {
    if (message.command !== 'setBreakpoints' || typeof message.seq !== 'number') return;
    const args = (message.arguments ?? {}) as { source?: { path?: unknown }; breakpoints?: unknown };
    if (typeof args.source?.path !== 'string') return;
    this.asked.set(message.seq, { path: args.source.path, breakpoints: Array.isArray(args.breakpoints) ? args.breakpoints : [] });
    if (this.asked.size > 200) this.asked.delete(this.asked.keys().next().value as number);
  }

  /** The `_breakpoints` event body for a setBreakpoints response: `{path, asked, got}`, else undefined. */
  response(message: { request_seq?: unknown; command?: unknown; success?: unknown; body?: unknown }): Record<string, unknown> | undefined {
    if (message.command !== 'setBreakpoints' || typeof message.request_seq !== 'number') return undefined;
    const asked = this.asked.get(message.request_seq);
    this.asked.delete(message.request_seq);
    if (!asked || message.success === false) return undefined;
    const got = ((message.body ?? {}) as { breakpoints?: unknown }).breakpoints;
    return { path: asked.path, asked: asked.breakpoints, got: Array.isArray(got) ? got : [] };
  }
}

/** The debug types the installed extensions contribute (`contributes.debuggers[].type`). */
export function debuggerTypes(packages: readonly unknown[]): string[] {
  const out = new Set<string>();
  for (const pkg of packages) {
    const debuggers = (pkg as { contributes?: { debuggers?: unknown } } | undefined)?.contributes?.debuggers;
    for (const d of Array.isArray(debuggers) ? debuggers : []) {
      const type = (d as { type?: unknown } | undefined)?.type;
      if (typeof type === 'string' && type) out.add(type);
    }
  }
  return [...out].sort();
}

const URI = /^[a-zA-Z][\w+.-]*:\/\//;

/** `value` with every `source.path` that VS Code turned into a URI (`vscode-remote://host/p`, `file:///p`:
 * a remote window's customRequest answers carry them) made a file path again; the rest as it was. */
export function localPaths<T>(value: T, depth = 0): T {
  if (depth > 12 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => localPaths(v, depth + 1)) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (k === 'source' && v && typeof v === 'object' && typeof (v as { path?: unknown }).path === 'string' && URI.test((v as { path: string }).path)) {
      const path = (v as { path: string }).path;
      let local = path;
      try {
        local = decodeURIComponent(new URL(path).pathname);
      } catch {
        // not a URL after all: left as it is
      }
      out[k] = { ...(localPaths(v, depth + 1) as object), path: local };
    } else {
      out[k] = localPaths(v, depth + 1);
    }
  }
  return out as T;
}
