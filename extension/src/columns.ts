// Columns: VS Code counts UTF-16 code units, the server counts Unicode code points.
// The bridge speaks code points; these convert one line's column each way.

/** The code-point column of the UTF-16 column `utf16` in `line`. */
export function codePointColumn(line: string, utf16: number): number {
  let units = 0;
  let points = 0;
  for (const ch of line) {
    if (units >= utf16) break;
    units += ch.length;
    points += 1;
  }
  return points;
}

/** The UTF-16 column of the code-point column `points` in `line` (past the end: the end). A negative
 * column means the end of the line. */
export function utf16Column(line: string, points: number): number {
  if (points < 0) return line.length;
  let units = 0;
  let seen = 0;
  for (const ch of line) {
    if (seen >= points) break;
    units += ch.length;
    seen += 1;
  }
  return units;
}
