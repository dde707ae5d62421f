/**
 * What the RAS watch knows of the job from the reports it was given, until it forgets the job (a
 * new service, none, an answer not believed, new settings): the last report, its format, the uid of
 * the verified socket that gave it, its findings (ras/findings.ts), how long each communicator's
 * counts have stood still over the reports (ras/progress.ts), and the job's view (ras/job-view.ts):
 * from the report, else from this node's logs. The last report's time outlives the job.
 */
import type { Finding } from "../verdict/report.js";
import { rasFindings } from "./findings.js";
import { jobViewFromLogs, jobViewOf, type LoggedComm, type RasJobView } from "./job-view.js";
import type { RasReport } from "./parse-text.js";
import { deadProcesses, observe, RasProgress, type ProgressOptions } from "./progress.js";
import { MAX_RAS_SERIES } from "./watch-snapshot.js";

export class LastReport {
  readonly progress: RasProgress;
  atMs: number | undefined;
  /** The last report, while the job answers. */
  report: RasReport | undefined;
  format: "json" | "text" | undefined;
  findings: readonly Finding[] = [];
  /** The job as the last report (or the logs) show it. */
  job: RasJobView | undefined;
  /** The uid of the verified socket whose answer is the report now (undefined: none verified). */
  private ownerUid: number | undefined;

  constructor(progress: ProgressOptions) {
    this.progress = new RasProgress({ ...progress });
  }

  /**
   * Keeps a report answered at `now` (`format`: the answer's), from a socket of `ownerUid` where it
   * was verified; `loggedComms`: this node's logged communicators (undefined: none known), the job's
   * view where the report does not tell it (a text report). Returns the report's format and how many
   * communicators it shows.
   */
  record(
    now: number,
    report: RasReport,
    format: "json" | "text",
    ownerUid: number | undefined,
    loggedComms: () => readonly LoggedComm[] | undefined,
  ): { format: "json" | "text"; communicators: number } {
    this.atMs = now;
    this.report = report;
    this.ownerUid = ownerUid;
    const kept = report.full !== undefined ? "json" : format === "json" ? "json" : "text";
    this.format = kept;
    const observed = observe(report);
    this.progress.record(now, observed);
    this.findings = rasFindings([{ source: "ras", reports: [report] }]);
    this.job = jobViewOf(report) ?? this.jobFromLogs(loggedComms);
    return { format: kept, communicators: observed.length };
  }

  /** The job as this node's logs show it (a text report): its anchor, no succession. */
  private jobFromLogs(loggedComms: () => readonly LoggedComm[] | undefined): RasJobView | undefined {
    const logged = loggedComms();
    return logged !== undefined ? jobViewFromLogs(logged, false)?.view : undefined;
  }

  /** The uid of the verified socket that gave the report now; undefined without a report or a check. */
  verifiedOwnerUid(): number | undefined {
    return this.report !== undefined ? this.ownerUid : undefined;
  }

  /** `node:pid` of the processes the report says RAS cannot reach, and of `more` (monitor events), at most MAX_RAS_SERIES. */
  dead(more: Iterable<string>): string[] {
    const dead = new Set(this.report === undefined ? [] : deadProcesses(this.report));
    for (const p of more) dead.add(p);
    return [...dead].slice(0, MAX_RAS_SERIES);
  }

  /** The job is gone: what its reports said goes (the last report's time stays). */
  forget(): void {
    this.job = undefined;
    this.progress.clear();
    this.report = undefined;
    this.format = undefined;
    this.findings = [];
  }
}
