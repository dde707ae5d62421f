/** The rank a dump's file (or its folder) is named after. */

function isLetter(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** `rank` then an optional `_`, `-` or `.`, then digits, as a word of its own: `stacks_rank_5.txt` → 5, `rank5` → 5, `frank5`, `ranking` → none. */
function rankInPart(part: string): number | undefined {
  const lower = part.toLowerCase();
  for (let k = lower.indexOf("rank"); k >= 0; k = lower.indexOf("rank", k + 4)) {
    if (k > 0 && isLetter(lower.charCodeAt(k - 1))) continue;
    let j = k + 4;
    const sep = lower.charCodeAt(j);
    if (sep === 95 || sep === 45 || sep === 46) j++;
    const start = j;
    let v = 0;
    while (j < lower.length && j - start < 7 && isDigit(lower.charCodeAt(j))) v = v * 10 + (lower.charCodeAt(j++) - 48);
    if (j === start || isDigit(lower.charCodeAt(j)) || isLetter(lower.charCodeAt(j))) continue;
    return v;
  }
  return undefined;
}

/** The rank in a path's file name, else in its folder's name (`rank5/pyspy.txt`). */
export function rankInName(path: string): number | undefined {
  const parts = path.split(/[\\/]/);
  const file = parts[parts.length - 1] ?? "";
  return rankInPart(file) ?? (parts.length > 1 ? rankInPart(parts[parts.length - 2] ?? "") : undefined);
}
