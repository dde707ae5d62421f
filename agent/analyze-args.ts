/**
 * The command line of `ringwatch analyze`: its flags, its --help text, and the exit code that
 * --fail-on gives a report. A bad flag is one clear line and exit 2, as for the agent's flags.
 */
import type { Severity } from "../collectors/nccl/verdict/report.js";

export const USAGE = "usage: ringwatch analyze [--json] [--fail-on=warning|critical] FILE|DIR|GLOB|- ...";

export const HELP = `${USAGE}
  Reads NCCL_DEBUG / PyTorch logs, PyTorch Flight Recorder dumps, NCCL RAS reports and kernel logs
  (dmesg, journalctl -k) of any number of ranks and nodes and prints the verdict.

  FILE       a log, a dump or a report; .gz and .zst are read compressed (known by their first bytes)
  DIR        a folder, read with its subfolders (a bundle: node1/, node2/, ...), without dot files;
             Markdown, metrics scrapes, binary files and JSON that is no RAS report are skipped
  GLOB       a quoted pattern the shell did not expand: 'logs/*.log', 'bundle/**/rank[0-7].log*'
  -          standard input

  --json                       print the report as one JSON object
  --fail-on=warning|critical   exit 1 when a finding of that severity or worse is found, else 0
  -h, --help                   show this help

  Exit: 0 when the input could be read (whatever was found, unless --fail-on), 1 see --fail-on,
  2 when nothing could be read or a flag is bad. What is skipped, and why, is said on stderr.
`;

export type FailOn = Exclude<Severity, "info">;

export interface AnalyzeArgs {
  json: boolean;
  failOn?: FailOn;
  paths: string[];
}

/** The flags and paths of argv; `help`, or one line saying what is wrong. */
export function parseAnalyzeArgs(argv: readonly string[]): AnalyzeArgs | "help" | { error: string } {
  const out: AnalyzeArgs = { json: false, paths: [] };
  let onlyPaths = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? "";
    if (onlyPaths || (!a.startsWith("--") && a !== "-h")) out.paths.push(a);
    else if (a === "--") onlyPaths = true;
    else if (a === "--json") out.json = true;
    else if (a === "-h" || a === "--help") return "help";
    else if (a === "--fail-on" || a.startsWith("--fail-on=")) {
      const value = a === "--fail-on" ? argv[++i] : a.slice("--fail-on=".length);
      if (value !== "warning" && value !== "critical") {
        const got = value === undefined ? "needs a value" : `takes warning or critical, not "${value}"`;
        return { error: `--fail-on ${got} (usage: ${USAGE.slice("usage: ".length)})` };
      }
      out.failOn = value;
    } else return { error: `unknown flag ${a} (${USAGE})` };
  }
  return out;
}

const RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2 };

/** The exit code of a report that could be read: 1 when failOn is set and a finding reaches it. */
export function exitCodeFor(findings: readonly { severity: Severity }[], failOn: FailOn | undefined): number {
  if (failOn === undefined) return 0;
  return findings.some((f) => RANK[f.severity] >= RANK[failOn]) ? 1 : 0;
}
