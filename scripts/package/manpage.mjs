// ringwatch(1), written from the executable's own --help (every flag as agent/config/flags.ts
// declares it), so the manual page can never list a flag the binary does not have.
import { execFileSync } from "node:child_process";

/** roff-escapes a line of text: backslashes, and a leading dot or quote. */
function roff(text) {
  const t = text.replace(/\\/g, "\\e").replace(/-/g, "\\-");
  return /^[.']/.test(t) ? `\\&${t}` : t;
}

/** The manual page (roff, man macros) of the executable `exe`, version `version`, dated `date` (YYYY-MM-DD). */
export function manPage(exe, version, date) {
  const help = execFileSync(exe, ["--help"], { encoding: "utf8" });
  const lines = help.split("\n");
  const out = [
    `.TH RINGWATCH 1 "${date}" "ringwatch ${version}" "User Commands"`,
    ".SH NAME",
    "ringwatch \\- GPU node agent for Prometheus: GPUs, InfiniBand, NCCL hang verdicts",
    ".SH SYNOPSIS",
  ];
  let i = 0;
  for (; i < lines.length && lines[i] !== ""; i++) {
    out.push(".nf", roff(lines[i].replace(/^(usage:)?\s+/, "")), ".fi");
  }
  out.push(
    ".SH DESCRIPTION",
    "ringwatch serves Prometheus metrics about the node's GPUs, InfiniBand and RoCE ports,",
    "GPUDirect RDMA readiness, interface MTUs, kernel Xid events and the NCCL communicators of",
    "its training jobs, with verdicts on hung collectives. The subcommands have their own",
    "\\fB\\-\\-help\\fR.",
    ".SH OPTIONS",
  );
  for (; i < lines.length; i++) {
    const line = lines[i];
    if (/^ {2}\S/.test(line)) out.push(".TP", `\\fB${roff(line.trim())}\\fR`);
    else if (/^ {6}\S/.test(line)) out.push(roff(line.trim()));
    else if (line.trim() !== "") out.push(".PP", roff(line.trim()));
  }
  out.push(
    ".SH FILES",
    ".TP",
    "\\fI/etc/default/ringwatch\\fR",
    "The service's flags (RINGWATCH_ARGS) and environment.",
    ".TP",
    "\\fI/var/lib/ringwatch\\fR",
    "The kernel log read position.",
    ".SH SEE ALSO",
    "\\fBprometheus\\fR(1), \\fBnvidia\\-smi\\fR(1); /usr/share/doc/ringwatch/",
  );
  return out.join("\n") + "\n";
}
