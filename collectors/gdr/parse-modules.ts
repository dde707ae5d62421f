/**
 * Pure parsers for the kernel's list of loaded modules, in its two forms:
 *
 * - `/proc/modules`: `name size refcount users state address [taints]`, one module per line.
 *   `users` is `-` (nobody) or a list that ends with a comma (`rdma_cm,ib_ipoib,`), and may hold
 *   `[permanent],`. Without CONFIG_MODULE_UNLOAD the refcount and users read `- -`. The address
 *   reads 0x0000000000000000 for unprivileged readers; taints look like `(POE)`.
 * - `lsmod`: a `Module  Size  Used by` header, then `name size refcount [a,b,c]`. Its size column
 *   can overflow its alignment (`nvidia              104153088  2 ...`), so lines are split on
 *   whitespace, never on columns. Captures are often grep'd, without the header.
 *
 * Lines that fit neither form are counted, not fatal: the caller decides what "no line parsed" means.
 */

export interface KernelModule {
  name: string;
  /** Bytes of memory the module uses. */
  size: number;
  /** Reference count; undefined where the kernel prints `-` (no CONFIG_MODULE_UNLOAD). */
  refcount: number | undefined;
  /** Modules that use this one ("Used by"), without `[permanent]` and empty entries. */
  users: string[];
  /** `Live`, `Loading` or `Unloading` (/proc/modules only; lsmod does not print it). */
  state: string | undefined;
}

export interface ModuleList {
  modules: KernelModule[];
  /** Non-blank lines that were neither a module nor the lsmod header. */
  invalidLines: number;
  /** lsmod's `Module Size Used by` header was seen. */
  sawHeader: boolean;
}

const NAME = /^[A-Za-z0-9_-]+$/;
/** A module size: at most 15 digits, so Number() is exact (400 digits would read as Infinity). */
const NUMBER = /^\d{1,15}$/;
const STATES = new Set(["Live", "Loading", "Unloading"]);
const ADDRESS = /^0x[0-9a-fA-F]+$/;
const TAINTS = /^\([A-Z]*\)$/;
const HEADER = /^Module\s+Size\s+Used\s+by\s*$/;

function parseRefcount(field: string): number | undefined | null {
  if (field === "-") return undefined;
  // An int in the kernel: at most 10 digits, never Infinity.
  return /^-?\d{1,10}$/.test(field) ? Number(field) : null;
}

function parseUsers(field: string | undefined): string[] {
  if (field === undefined || field === "-") return [];
  return field.split(",").filter((u) => u.length > 0 && u !== "[permanent]");
}

/**
 * `-`, or names and `[permanent]` separated by commas, with an optional trailing comma. Checked item
 * by item: one regular expression with a repeated group overflowed V8's backtracking stack (a
 * RangeError) on a users field of a few MB.
 */
function validUsers(field: string): boolean {
  if (field === "-") return true;
  const items = field.split(",");
  if (items.length > 1 && items[items.length - 1] === "") items.pop();
  return items.every((u) => u === "[permanent]" || NAME.test(u));
}

/** One /proc/modules line, or null when it does not have that shape. */
export function parseProcModulesLine(line: string): KernelModule | null {
  const f = line.trim().split(/\s+/);
  if (f.length < 6 || f.length > 7) return null;
  const [name, size, ref, users, state, addr, taints] = f as [string, string, string, string, string, string, string?];
  if (!NAME.test(name) || !NUMBER.test(size) || !validUsers(users) || !STATES.has(state) || !ADDRESS.test(addr)) return null;
  if (taints !== undefined && !TAINTS.test(taints)) return null;
  const refcount = parseRefcount(ref);
  if (refcount === null) return null;
  return { name, size: Number(size), refcount, users: parseUsers(users), state };
}

/** One lsmod line (not the header), or null when it does not have that shape. */
export function parseLsmodLine(line: string): KernelModule | null {
  const f = line.trim().split(/\s+/);
  if (f.length < 3 || f.length > 4) return null;
  const [name, size, ref, users] = f as [string, string, string, string?];
  if (!NAME.test(name) || !NUMBER.test(size)) return null;
  if (users !== undefined && !validUsers(users)) return null;
  const refcount = parseRefcount(ref);
  if (refcount === null) return null;
  return { name, size: Number(size), refcount, users: parseUsers(users), state: undefined };
}

function parseLines(text: string, parseLine: (line: string) => KernelModule | null, header: boolean): ModuleList {
  const out: ModuleList = { modules: [], invalidLines: 0, sawHeader: false };
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "") continue;
    if (header && HEADER.test(line.trim())) {
      out.sawHeader = true;
      continue;
    }
    const mod = parseLine(line);
    if (mod) out.modules.push(mod);
    else out.invalidLines++;
  }
  return out;
}

/** Parse the whole text of /proc/modules. */
export function parseProcModules(text: string): ModuleList {
  return parseLines(text, parseProcModulesLine, false);
}

/** Parse the whole output of `lsmod` (header optional: grep'd excerpts have none). */
export function parseLsmod(text: string): ModuleList {
  return parseLines(text, parseLsmodLine, true);
}
