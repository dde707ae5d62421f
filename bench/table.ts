/** The bench table: one row per figure, with its goal and PASS / MISS ("—" for reference rows). */
export type Status = "PASS" | "MISS" | "—";

export interface Row {
  what: string;
  measured: string;
  goal: string;
  status: Status;
}

export const verdict = (ok: boolean): Status => (ok ? "PASS" : "MISS");

export function formatTable(rows: readonly Row[]): string {
  const cells = rows.map((r) => [r.what, r.measured, r.goal, r.status]);
  const head = ["what", "measured", "goal", ""];
  const w = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]?.length ?? 0)));
  const line = (c: string[]): string =>
    c
      .map((x, i) => x.padEnd(w[i] ?? 0))
      .join(" | ")
      .trimEnd();
  return [line(head), w.map((n) => "-".repeat(n)).join("-|-"), ...cells.map(line)].join("\n");
}

/** The same rows as a Markdown table (for docs/performance.md). */
export function markdownTable(rows: readonly Row[]): string {
  const esc = (s: string): string => s.replace(/\|/g, "\\|");
  return [
    "| what | measured | goal | |",
    "|---|---|---|---|",
    ...rows.map((r) => `| ${esc(r.what)} | ${esc(r.measured)} | ${esc(r.goal)} | ${r.status === "—" ? "—" : `**${r.status}**`} |`),
  ].join("\n");
}
