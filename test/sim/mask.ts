/**
 * Shape of a log line with its values masked, for comparing simulated lines with real ones:
 * the `host:pid:tid [dev] ` header becomes `H:N:N [N] `, hex pointers `0xP`, and every run of
 * hex digits that contains a decimal digit (counts, busIds, opCounts, IPs, dates) `N`; a minus
 * sign in front of a number (`Trees [0] -1/-1/-1->0->1`) is dropped, so -1 and 3 look alike.
 * The hex opCount is masked even when it has no decimal digit (`opCount d`, fixture 56).
 */
export function maskLine(line: string): string {
  return line
    .replace(/^((?:\[[^\]]*\] )?)[^\s:]+:\d+:\d+ \[\d+\] /, "$1H:N:N [N] ")
    .replace(/(^|[\s/[(])-(?=\d)/g, "$1")
    .replace(/\bopCount [0-9a-f]+\b/g, "opCount 1")
    .replace(/0x[0-9a-fA-F]+|[0-9a-fA-F]*\d[0-9a-fA-F]*/g, (m) => (m.startsWith("0x") ? "0xP" : "N"));
}
