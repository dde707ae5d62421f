/**
 * The parts that bound what one client can take of the HTTP server, in process: who a connection
 * comes from and each client's share (agent/web/clients.ts), the connection limits derived from the
 * open-file limit, and the password checks (agent/web/auth.ts) with real bcrypt.
 */
import bcrypt from "bcryptjs";
import { describe, expect, it } from "vitest";
import { BasicAuth, FAILED_MAX, MAX_PENDING, MAX_PENDING_PER_CLIENT, PasswordChecks, costOf } from "../../agent/web/auth.js";
import { THIS_HOST, connectionLimits, hostClients, isLoopback, openFileLimit, ownOpenFileLimit, plainAddress, Shares } from "../../agent/web/clients.js";

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

describe("clients", () => {
  it.each([
    ["::ffff:10.0.0.7", "10.0.0.7"],
    ["::FFFF:127.0.0.1", "127.0.0.1"],
    ["fe80::1%eth0", "fe80::1"],
    ["2001:db8::7", "2001:db8::7"],
    ["::ffff:abcd", "::ffff:abcd"], // not a mapped IPv4 address
    ["10.0.0.7", "10.0.0.7"],
  ])("plainAddress(%j) = %j", (a, want) => expect(plainAddress(a)).toBe(want));

  it("counts loopback (all of 127/8 and ::1) and the host's own addresses as one client, any other address as itself", () => {
    expect([isLoopback("127.0.0.1"), isLoopback("127.200.3.4"), isLoopback("::1"), isLoopback("128.0.0.1"), isLoopback("::2")]).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
    let reads = 0;
    let now = 0;
    let own = new Set(["10.0.0.5", "fe80::5"]);
    const clientOf = hostClients(
      10_000,
      () => now,
      () => (reads++, own),
    );
    expect(clientOf("127.0.0.9")).toBe(THIS_HOST);
    expect(reads).toBe(0); // loopback needs no look at the interfaces
    expect(clientOf("::ffff:10.0.0.5")).toBe(THIS_HOST);
    expect(clientOf("fe80::5%ib0")).toBe(THIS_HOST);
    expect(clientOf("10.0.0.6")).toBe("10.0.0.6");
    expect(clientOf("::ffff:10.0.0.6")).toBe("10.0.0.6");
    expect(reads).toBe(1); // read once, then reused
    own = new Set(["10.0.0.6"]);
    now = 9_999;
    expect(clientOf("10.0.0.6")).toBe("10.0.0.6");
    now = 10_000;
    expect(clientOf("10.0.0.6")).toBe(THIS_HOST); // read again: an address that came up
    expect(reads).toBe(2);
  });

  it("keeps the last known addresses when they cannot be read (no file descriptor left)", () => {
    let now = 0;
    let readable = true;
    const clientOf = hostClients(
      1,
      () => now,
      () => (readable ? new Set(["10.0.0.5"]) : undefined),
    );
    expect(clientOf("10.0.0.5")).toBe(THIS_HOST);
    readable = false;
    now = 5;
    expect(clientOf("10.0.0.5")).toBe(THIS_HOST);
  });

  it("this machine's own addresses are one client with loopback", () => {
    // The real interfaces: whatever this machine has, each of its addresses is "this host".
    const clientOf = hostClients();
    expect(clientOf("127.0.0.1")).toBe(THIS_HOST);
    expect(clientOf("192.0.2.1")).toBe("192.0.2.1"); // TEST-NET-1: never a host's own address
  });

  it("Shares: at most perClient for one client and total for all; give() frees one", () => {
    const s = new Shares(3, 2);
    expect([s.take("a"), s.take("a"), s.take("a")]).toEqual([true, true, false]);
    expect([s.take("b"), s.take("c")]).toEqual([true, false]); // total reached
    s.give("a");
    expect(s.heldBy("a")).toBe(1);
    expect(s.take("c")).toBe(true);
    s.give("nobody"); // never taken: nothing changes
    expect(s.used).toBe(3);
  });
});

describe("connection limits", () => {
  const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            200                  4096                 files
Max locked memory         8388608              8388608              bytes
`;

  it("reads the soft open-file limit of /proc/<pid>/limits", () => {
    expect(openFileLimit(LIMITS)).toBe(200);
    expect(openFileLimit(LIMITS.replace("200  ", "unlimited"))).toBeUndefined();
    expect(openFileLimit("Max cpu time unlimited unlimited seconds\n")).toBeUndefined();
    const own = ownOpenFileLimit();
    expect(own).toBeGreaterThan(0); // this process's, from the real /proc
  });

  it.each([
    [undefined, 512, 256],
    [1_048_576, 512, 256],
    [1024, 512, 256],
    [200, 72, 36],
    [100, 16, 8],
  ])("open-file limit %j: %j connections, %j per client", (limit, total, perClient) => {
    expect(connectionLimits(limit)).toEqual({ total, perClient });
  });
});

describe("password checks", () => {
  const users = (entries: Record<string, string>): BasicAuth => new BasicAuth(new Map(Object.entries(entries)));
  const h4 = bcrypt.hashSync("s3cret", 4);

  it("checks an unknown user against a decoy of the cost most users have", () => {
    const h5 = bcrypt.hashSync("x", 5);
    const h6 = bcrypt.hashSync("x", 6);
    expect(costOf(users({ a: h4, b: h5, c: h5, d: h6 }).decoy)).toBe(5);
    expect(costOf(users({ a: h4, b: h6 }).decoy)).toBe(6); // a tie: the costlier
    expect(costOf(users({}).decoy)).toBe(10);
    expect(users({ a: h4 }).decoy).toMatch(/^\$2y\$04\$[./A-Za-z0-9]{53}$/);
  });

  it("answers ok, denied, or busy beyond a client's share of pending checks (and beyond the total)", async () => {
    const slow = bcrypt.hashSync("s3cret", 9);
    const auth = users({ prometheus: slow });
    const checks = new PasswordChecks();
    try {
      const mine = Array.from({ length: MAX_PENDING_PER_CLIENT }, (_, i) => checks.check(auth, basic("prometheus", `wrong${i}`), "local"));
      expect(checks.pending).toBe(MAX_PENDING_PER_CLIENT);
      expect(await checks.check(auth, basic("prometheus", "one more"), "local")).toBe("busy");
      // Another client still gets its checks in, up to the total.
      const theirs = Array.from({ length: MAX_PENDING - MAX_PENDING_PER_CLIENT }, (_, i) =>
        checks.check(auth, basic("prometheus", i === 0 ? "s3cret" : `x${i}`), `10.0.0.${i}`),
      );
      expect(checks.pending).toBe(MAX_PENDING);
      expect(await checks.check(auth, basic("prometheus", "s3cret!"), "10.9.9.9")).toBe("busy");
      // The same credentials as a pending check wait for it and take no share.
      const again = checks.check(auth, basic("prometheus", "wrong0"), "local");
      expect(checks.pending).toBe(MAX_PENDING);
      expect(await Promise.all([...mine, again])).toEqual(["denied", "denied", "denied"]);
      expect(await Promise.all(theirs)).toEqual(["ok", ...Array<string>(MAX_PENDING - MAX_PENDING_PER_CLIENT - 1).fill("denied")]);
      expect(checks.pending).toBe(0);
      expect(await checks.check(auth, basic("prometheus", "one more"), "local")).toBe("denied"); // room again
    } finally {
      checks.stop();
    }
  });

  /** A check of user "slow" (a cost-9 hash) holds the one check slot of `checks` while fn runs: whatever needs a check meanwhile is "busy". */
  async function slotHeld<T>(checks: PasswordChecks, auth: BasicAuth, fn: () => Promise<T>): Promise<T> {
    const blocker = checks.check(auth, basic("slow", "wrong"), "a");
    expect(checks.pending).toBe(1);
    try {
      return await fn();
    } finally {
      await blocker;
    }
  }
  const SLOW = bcrypt.hashSync("x", 9);

  it("caches right and wrong passwords apart: a flood of wrong ones does not push the right one out", async () => {
    const auth = users({ prometheus: h4, slow: SLOW });
    const checks = new PasswordChecks({ total: 1, perClient: 1 });
    try {
      expect(await checks.check(auth, basic("prometheus", "s3cret"), "a")).toBe("ok");
      for (let i = 0; i < FAILED_MAX + 100; i++) expect(await checks.check(auth, basic("prometheus", `wrong${i}`), "a")).toBe("denied");
      expect(checks.cached).toEqual({ passed: 1, failed: FAILED_MAX });
      await slotHeld(checks, auth, async () => {
        expect(await checks.check(auth, basic("prometheus", "s3cret"), "a")).toBe("ok"); // from the cache
        expect(await checks.check(auth, basic(`prometheus`, `wrong${FAILED_MAX + 99}`), "a")).toBe("denied"); // the newest failure, cached
        expect(await checks.check(auth, basic("prometheus", "wrong0"), "a")).toBe("busy"); // the oldest, pushed out: a check again
      });
    } finally {
      checks.stop();
    }
  });

  it("a cached failure never refuses a right password after the config changed; a reload keeps the entries of unchanged users", async () => {
    const checks = new PasswordChecks({ total: 1, perClient: 1 });
    const other = bcrypt.hashSync("other-pw", 4);
    try {
      const before = users({ prometheus: h4, grafana: other, slow: SLOW });
      expect(await checks.check(before, basic("prometheus", "n3w"), "a")).toBe("denied");
      expect(await checks.check(before, basic("newbie", "pw"), "a")).toBe("denied"); // unknown: the decoy
      expect(await checks.check(before, basic("grafana", "other-pw"), "a")).toBe("ok");
      expect(checks.cached).toEqual({ passed: 1, failed: 2 });

      const after = users({ prometheus: bcrypt.hashSync("n3w", 4), grafana: other, newbie: bcrypt.hashSync("pw", 4), slow: SLOW });
      expect(await checks.check(after, basic("prometheus", "n3w"), "a")).toBe("ok");
      expect(await checks.check(after, basic("newbie", "pw"), "a")).toBe("ok");
      // The entries of the old hash and of the unknown user are gone; grafana's is kept...
      expect(checks.cached).toEqual({ passed: 3, failed: 0 });
      // ...and used: no check is needed for it.
      await slotHeld(checks, after, async () => expect(await checks.check(after, basic("grafana", "other-pw"), "a")).toBe("ok"));
      expect(await checks.check(after, basic("prometheus", "s3cret"), "a")).toBe("denied"); // the old password is wrong now
    } finally {
      checks.stop();
    }
  });
});
