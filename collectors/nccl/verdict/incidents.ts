/**
 * One verdict per incident: the findings of a report, grouped by the fact they are evidence of, the
 * one that names the most (sortFindings' order: the culprit first) leading each group. A hang is one
 * incident whatever its sources say of it (the logs' COLL lines, PyTorch's watchdog and status
 * lines, Flight Recorder, RAS) together with the errors of its ranks; hardware events, NCCL RAS
 * diagnostics and the transport are incidents of their own; findings at info stand alone, as notes.
 * Pure: the same findings give the same incidents.
 */
import type { Finding, FindingKind, Incident, Severity } from "./report.js";
import { kindRow, type Fact } from "./finding-kinds.js";

/** What a finding of this kind is evidence of (its row in finding-kinds.ts). */
const factOf = (kind: FindingKind): Fact => kindRow(kind).fact;

/** The first sentence of a summary (a sentence ends with ". " before a capital letter, or at the end). */
export function firstSentence(s: string): string {
  for (let i = s.indexOf(". "); i >= 0; i = s.indexOf(". ", i + 2)) {
    const c = s.charCodeAt(i + 2);
    if (c >= 65 && c <= 90) return s.slice(0, i + 1);
  }
  return s;
}

/**
 * The incidents of findings already in sortFindings' order. Failures (NCCL and network errors) join
 * the hang where there is one: a failed connection or a crashed rank is what a hang is made of, and
 * the errors are below it as its evidence; without a hang they are one incident of their own.
 */
export function incidentsOf(findings: readonly Finding[]): Incident[] {
  const hang = findings.some((f) => f.severity !== "info" && factOf(f.kind) === "hang");
  const groups = new Map<string, number[]>();
  findings.forEach((f, i) => {
    let fact: Fact = f.severity === "info" ? "note" : factOf(f.kind);
    if (fact === "failure" && hang) fact = "hang";
    const key = fact === "note" ? `note ${i}` : fact;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [i]);
    else group.push(i);
  });
  const out: Incident[] = [];
  for (const idx of groups.values()) {
    const lead = findings[idx[0] ?? 0];
    if (lead === undefined) continue;
    out.push({ severity: lead.severity, headline: firstSentence(lead.summary), findings: idx });
  }
  return out;
}

const WORD: Record<Severity, string> = { critical: "critical", warning: "warning", info: "info" };

/** The report's first line: the first incident's headline, and what else was found; a healthy job's logs say so. */
export function headlineOf(findings: readonly Finding[], incidents: readonly Incident[]): string {
  const serious = incidents.filter((i) => i.severity !== "info");
  const first = serious[0];
  if (first === undefined) {
    const note = incidents[0] !== undefined ? findings[incidents[0].findings[0] ?? 0] : undefined;
    return note === undefined
      ? "nothing wrong found: no hang, no failure and no transport problem in these logs."
      : `nothing wrong found at warning or above; ${incidents.length === 1 ? "a note" : `${incidents.length} notes`} below, the first: ${firstSentence(note.summary)}`;
  }
  const more = serious.slice(1).map((i) => `${WORD[i.severity]} ${findings[i.findings[0] ?? 0]?.kind ?? ""}`);
  return `${first.headline}${more.length > 0 ? ` Also: ${more.join(", ")} (below).` : ""}`;
}
