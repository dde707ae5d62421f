/**
 * NCCL version handling: which line shapes a given release prints. Every threshold names its
 * evidence (a fixture in test/fixtures/nccl/ or the NCCL source text); where the exact release a
 * change landed in is unknown, the threshold is the nearest release we have evidence for.
 */

export interface NcclVersion {
  major: number;
  minor: number;
  patch: number;
  /** As printed on the version line, e.g. "2.23.4+cuda12.4". */
  full: string;
}

/** Lowest and highest release whose shapes the simulator knows. */
export const MIN_MINOR = 19;
export const MAX_MINOR = 29;

export function parseVersion(v: string): NcclVersion {
  const m = /^(\d+)\.(\d+)\.(\d+)(\+cuda\d+\.\d+)?$/.exec(v.trim());
  if (m === null) throw new Error(`bad NCCL version ${JSON.stringify(v)} (want e.g. "2.23.4" or "2.21.5+cuda12.4")`);
  const major = Number(m[1]);
  const minor = Number(m[2]);
  const patch = Number(m[3]);
  if (major !== 2 || minor < MIN_MINOR || minor > MAX_MINOR) {
    throw new Error(`NCCL ${v}: the simulator knows 2.${MIN_MINOR} to 2.${MAX_MINOR}`);
  }
  // Default CUDA suffix: 12.4 up to 2.25 (fixtures 02, 28), 12.8 from 2.26 (fixture 05 is 2.29.2+cuda12.8).
  const cuda = m[4] ?? (minor >= 26 ? "+cuda12.8" : "+cuda12.4");
  return { major, minor, patch, full: `${major}.${minor}.${patch}${cuda}` };
}

/** Version-dependent output, one flag per difference. */
export interface VersionTraits {
  /** >=2.23 every process logs `NCCL version` (fixture 02); before, only global rank 0 (fixtures 28, 04). */
  versionOnEveryProcess: boolean;
  /** Before 2.23 rank 0 also prints a bare `NCCL version ...` line on stdout (fixtures 28, 13, 04). */
  bareVersionOnStdout: boolean;
  /** `Bootstrap : Using` (2.23, fixture 02) became `Bootstrap: Using` (2.27, fixture 32). */
  bootstrapWord: string;
  /** 2.29 prefixes the non-split Init START with `[Rank N] ` (fixture 05, NCCL source). */
  rankPrefixOnInitStart: boolean;
  /** Split comms print `splitCount` up to 2.27, `childCount` from 2.28 (NCCL source). */
  splitCountWord: "splitCount" | "childCount";
  /** Ring listing `Channel 00/03 : 0 1 2` (2.23, fixture 02) vs `Channel 00/02 :    0   1` (<=2.22, fixtures 04, 26). */
  ringSingleSpace: boolean;
  /** >=2.22 connects channels at the first collective (NCCL_RUNTIME_CONNECT=1): channel lines follow Init COMPLETE (fixture 02). */
  runtimeConnect: boolean;
  /** `Init timings - ...` line (2.23, fixture 02; 2.29, fixture 05). */
  initTimings: boolean;
  /** >=2.27 opCount only advances for plans with network operations (NVIDIA/nccl PR#2021). */
  opCountNetOnly: boolean;
  /** >=2.26 WARN lines start with `[YYYY-MM-DD HH:MM:SS] ` (GUIDE section 5, fixture 05). */
  warnTimestamp: boolean;
  /** `N coll channels, N collnet channels, 0 nvls channels, ...` (fixtures 02, 05) vs no collnet part (fixture 41, ~2.19). */
  collnetInChannelsLine: boolean;
  /** `Using non-device net plugin version 0` printed by 2.20-2.22 (fixtures 44, 49, 28). */
  nonDeviceNetLine: boolean;
  /** 2.28+ net plugin bookkeeping lines: `Initialized NET plugin Socket`, `Assigned NET plugin Socket to comm` (fixture 05). */
  netPluginInitLines: boolean;
  /** Destroy/Abort COMPLETE are logged under INIT up to 2.27 and under DESTROY from 2.28 (NCCL source). */
  destroySubsys: "INIT" | "DESTROY";
}

export function traitsOf(v: NcclVersion): VersionTraits {
  const n = v.minor;
  return {
    versionOnEveryProcess: n >= 23,
    bareVersionOnStdout: n < 23,
    bootstrapWord: n >= 27 ? "Bootstrap: Using" : "Bootstrap : Using",
    rankPrefixOnInitStart: n >= 29,
    splitCountWord: n >= 28 ? "childCount" : "splitCount",
    ringSingleSpace: n >= 23,
    runtimeConnect: n >= 22,
    initTimings: n >= 23,
    opCountNetOnly: n >= 27,
    warnTimestamp: n >= 26,
    collnetInChannelsLine: n >= 20,
    nonDeviceNetLine: n >= 20 && n <= 22,
    netPluginInitLines: n >= 28,
    destroySubsys: n >= 28 ? "DESTROY" : "INIT",
  };
}
