/** `ringwatch --help`: every flag as agent/config/flags.ts declares it. */
import { envName } from "../../collectors/settings/flags.js";
import { FLAGS } from "./flags.js";

export function helpText(): string {
  const lines = [
    "usage: ringwatch [flags]",
    "       ringwatch analyze [--json] [--fail-on=warning|critical] FILE|DIR|GLOB|- ...   (ringwatch analyze --help)",
    "       ringwatch check [--json] [--check.file=FILE] [--check.<expectation>=...] [flags]   (ringwatch check --help)",
    "",
    "Flags (each also as env RINGWATCH_<NAME> and as a YAML key in --config.file):",
  ];
  for (const f of FLAGS) {
    const head = f.kind === "bool" ? `  --[no-]${f.name}` : `  --${f.name}=${f.kind.toUpperCase()}`;
    const dflt = f.default !== undefined ? ` (default: ${f.default})` : "";
    lines.push(`${head}`, `      ${f.help}${dflt}  [env ${envName(f.name)}]`);
  }
  lines.push("  -h, --help", "      Show this help.", "  --version", "      Show the version.");
  return lines.join("\n") + "\n";
}
