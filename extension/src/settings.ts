// Turning the extension's settings into the server's command line (no vscode import: unit-tested).

import * as crypto from 'node:crypto';

export interface ServerSettings {
  args: string[];
  protectedPaths: string[];
  readOnly: boolean;
  untrusted: 'auto' | 'always' | 'never';
  tools: string;
}

/** The arguments after the server's executable for one workspace folder. */
export function serverArgs(s: ServerSettings, folder: string, workspaceTrusted: boolean): string[] {
  const args = [...s.args, '--workspace', folder];
  for (const p of s.protectedPaths) if (p.trim()) args.push('--protect', p.trim());
  if (s.readOnly) args.push('--read-only');
  if (s.untrusted === 'always' || (s.untrusted === 'auto' && !workspaceTrusted)) args.push('--untrusted');
  if (s.tools.trim()) args.push('--tools', s.tools.trim());
  return args;
}

/** "9960-9990" -> [9960, 9990]; throws a clear error on anything else. */
export function parsePortRange(text: string): [number, number] {
  const m = /^\s*(\d{1,5})\s*-\s*(\d{1,5})\s*$/.exec(text);
  const lo = m ? Number(m[1]) : NaN;
  const hi = m ? Number(m[2]) : NaN;
  if (!m || lo < 1 || hi > 65535 || lo > hi) {
    throw new Error(`mcpServerIde.http.portRange ${JSON.stringify(text)} is not a range like "9960-9990" (1 <= low <= high <= 65535)`);
  }
  return [lo, hi];
}

/** The port the server announced on stderr ("listening on http://127.0.0.1:PORT/mcp"), if any. */
export function announcedPort(stderr: string): number | undefined {
  const m = /listening on http:\/\/[^\s/]*:(\d+)\/mcp/.exec(stderr);
  return m ? Number(m[1]) : undefined;
}

/** What an assistant outside VS Code needs to reach the HTTP server of each folder. */
export function connectionConfig(ports: { name: string; port: number }[]): string {
  const servers: Record<string, { type: string; url: string }> = {};
  for (const { name, port } of ports) {
    servers[ports.length === 1 ? 'ide' : `ide-${name}`] = { type: 'http', url: `http://127.0.0.1:${port}/mcp` };
  }
  return JSON.stringify({ mcpServers: servers }, null, 2);
}

/** The definition's version for VS Code: the extension's version plus a digest of how the server starts,
 * so VS Code's cached tool list of a server started with other options (another --tools) is not reused. */
export function definitionVersion(extensionVersion: string, command: string, args: string[]): string {
  const digest = crypto.createHash('sha256').update(JSON.stringify([command, ...args])).digest('hex').slice(0, 10);
  return `${extensionVersion}+${digest}`;
}
