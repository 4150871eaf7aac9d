// VS Code's diagnostics in the server's problem form (no vscode import: unit-tested). Severities are
// vscode.DiagnosticSeverity's values (Error 0 ... Hint 3); characters stay UTF-16, as the server's are.

export const MAX_DIAGNOSTICS = 5000;

export interface WireDiagnostic {
  severity: string;
  line: number;
  character: number;
  endLine: number;
  endCharacter: number;
  message: string;
  source: string;
  code: string;
}

interface Pos {
  line: number;
  character: number;
}

/** The parts of a vscode.Diagnostic read here. */
export interface DiagnosticLike {
  severity: number;
  range: { start: Pos; end: Pos };
  message: string;
  source?: string;
  code?: string | number | { value: string | number };
}

const SEVERITIES = ['error', 'warning', 'information', 'hint'];

export function diagnosticOut(d: DiagnosticLike): WireDiagnostic {
  const code = typeof d.code === 'object' && d.code !== null ? d.code.value : d.code;
  return {
    severity: SEVERITIES[d.severity] ?? 'error',
    line: d.range.start.line,
    character: d.range.start.character,
    endLine: d.range.end.line,
    endCharacter: d.range.end.character,
    message: d.message,
    source: d.source ?? '',
    code: code === undefined ? '' : String(code),
  };
}
