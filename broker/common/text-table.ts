// Plain-text tables for command output and reports. In common because both the
// CLI and the cost report print them, and cost/ must not depend on cli/.

/** Columns padded to their widest cell, kafka-consumer-groups style (two spaces apart, no trailing spaces). */
export function formatTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}
