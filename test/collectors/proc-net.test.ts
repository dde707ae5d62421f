/**
 * The /proc/net/tcp{,6} parser (collectors/nccl/ras/proc-net.ts) on the kernel's own text
 * (test/fixtures/procfs/ras-listeners, SOURCES-net.md says what was open), and the address keys the
 * RAS socket owner compares with Node's socket addresses.
 */
import { describe, expect, it } from "vitest";
import {
  addressKey,
  addressText,
  parseProcNetTcp,
  printedEndpoint,
  socketsAt,
  TCP_ESTABLISHED,
  TCP_LISTEN,
  type TcpSocket,
} from "../../collectors/proc-net.js";
import { readCapture, readFixtureRaw } from "../helpers/fixtures.js";

const TCP = readCapture("procfs/ras-listeners/net/tcp");
const TCP6 = readCapture("procfs/ras-listeners/net/tcp6");

/** A row as text, to compare whole rows. */
const row = (s: TcpSocket): string =>
  `${addressText(s.local)}:${s.localPort} ${addressText(s.remote)}:${s.remotePort} st=${s.state.toString(16)} uid=${s.uid} inode=${s.inode}`;

describe("parseProcNetTcp", () => {
  it("tcp: the listener run as uid 65534, the accepted connection with the listener's uid, the clients", () => {
    // Line 1 of the capture names its source; the tests read what follows it, the kernel's text.
    expect(readFixtureRaw("procfs/ras-listeners/net/tcp").split("\n")[0]).toMatch(/^# source: /);
    expect(TCP.startsWith("  sl  local_address rem_address")).toBe(true);
    expect(parseProcNetTcp(TCP, 4, true).map(row)).toEqual([
      "127.0.0.1:28028 0.0.0.0:0 st=a uid=65534 inode=9661",
      "127.0.0.1:40870 127.0.0.1:28029 st=1 uid=0 inode=9679",
      "127.0.0.1:48238 127.0.0.1:28028 st=1 uid=0 inode=9676",
      "127.0.0.1:28028 127.0.0.1:48238 st=1 uid=65534 inode=9677",
    ]);
    const [listener, , , accepted] = parseProcNetTcp(TCP, 4, true);
    expect(listener?.state).toBe(TCP_LISTEN);
    expect(accepted?.state).toBe(TCP_ESTABLISHED);
    expect(accepted?.local).toBe(addressKey("127.0.0.1"));
    expect(accepted?.remote).toBe(addressKey("::ffff:127.0.0.1"));
  });

  it("tcp6: the wildcard and ::1 listeners, their connections, and an IPv4 client of the dual-stack one, mapped", () => {
    expect(parseProcNetTcp(TCP6, 6, true).map(row)).toEqual([
      "0:0:0:0:0:0:0:0:28029 0:0:0:0:0:0:0:0:0 st=a uid=0 inode=9667",
      "0:0:0:0:0:0:0:1:28028 0:0:0:0:0:0:0:0:0 st=a uid=0 inode=10555",
      "0:0:0:0:0:0:0:1:48814 0:0:0:0:0:0:0:1:28028 st=1 uid=0 inode=9678",
      "0:0:0:0:0:0:0:1:28028 0:0:0:0:0:0:0:1:48814 st=1 uid=0 inode=9680",
      "127.0.0.1:28029 127.0.0.1:40870 st=1 uid=0 inode=9681",
    ]);
    const rows = parseProcNetTcp(TCP6, 6, true);
    expect(rows[3]?.local).toBe(addressKey("::1"));
    // The IPv4 connection the dual-stack socket accepted has the same key as its IPv4 client's view.
    expect(rows[4]?.local).toBe(addressKey("127.0.0.1"));
    expect(rows[4]?.remote).toBe(parseProcNetTcp(TCP, 4, true)[1]?.local);
  });

  it("reads the words in the order of the kernel that wrote them", () => {
    // A big-endian kernel prints 127.0.0.1 as 7F000001; read as little-endian that is 1.0.0.127.
    expect(parseProcNetTcp(TCP, 4, false).map((s) => addressText(s.local))[0]).toBe("1.0.0.127");
    const be = "  sl  local_address rem_address   st\n   0: 7F000001:6D7C 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 42 1\n";
    expect(parseProcNetTcp(be, 4, false).map(row)).toEqual(["127.0.0.1:28028 0.0.0.0:0 st=a uid=1000 inode=42"]);
  });

  it("skips what is not a socket row: the header, cut or garbled rows, the other table's width", () => {
    const good = TCP.split("\n")[1] ?? "";
    const lines = [
      good,
      good.slice(0, 60), // cut
      good.replace("0100007F:6D7C", "0100007G:6D7C"), // not hex
      good.replace("0100007F:6D7C", "0100007F6D7C"), // no port
      good.replace("0100007F:6D7C", "00100007F:6D7C"), // 9 digits
      good.replace(" 0A ", " A ").replace("65534", "65534 "), // one-digit state
      good.replace("65534", "-1"), // uid not a number
      good.replace(" 9661 ", " 9661x "), // inode not a number
      TCP6.split("\n")[1] ?? "", // a tcp6 row read as tcp
      "",
      "\t\t",
    ];
    expect(parseProcNetTcp(lines.join("\n"), 4, true).map((s) => s.inode)).toEqual([9661]);
    expect(parseProcNetTcp(TCP.replace(/\n/g, "\r\n"), 4, true)).toHaveLength(4);
    expect(parseProcNetTcp("", 4, true)).toEqual([]);
  });

  it("never throws, and stays linear, on garbage", () => {
    let seed = 7;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const alphabet = "0123456789ABCDEF: \n\tx";
    for (let i = 0; i < 500; i++) {
      const base = i % 2 === 0 ? TCP : TCP6;
      const chars = [...base];
      for (let k = 0; k < 20; k++) chars[rnd(chars.length)] = alphabet[rnd(alphabet.length)] ?? "";
      const out = parseProcNetTcp(chars.join(""), i % 2 === 0 ? 4 : 6, true);
      for (const s of out) expect(s.local).toHaveLength(32);
    }
    const long = `   0: ${"0".repeat(200_000)}:6D7C ${":".repeat(200_000)}`;
    const t0 = performance.now();
    expect(parseProcNetTcp(long, 4, true)).toEqual([]);
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});

describe("socketsAt: only the rows whose local end is the one asked", () => {
  const v4 = addressKey("127.0.0.1") ?? "";
  const v6 = addressKey("::1") ?? "";

  it("prints an endpoint as the kernel does", () => {
    expect(printedEndpoint(v4, 28028, 4, true)).toBe("0100007F:6D7C");
    expect(printedEndpoint(v4, 28028, 4, false)).toBe("7F000001:6D7C");
    expect(printedEndpoint(v4, 80, 6, true)).toBe("0000000000000000FFFF00000100007F:0050");
    expect(printedEndpoint(v6, 28028, 6, true)).toBe("00000000000000000000000001000000:6D7C");
    expect(printedEndpoint(v6, 28028, 4, true)).toBeUndefined(); // no IPv6 address in tcp
  });

  it("finds the listener and the accepted socket, not the client whose remote end it is", () => {
    expect(socketsAt(TCP, 4, v4, 28028, true).map((s) => s.inode)).toEqual([9661, 9677]);
    expect(socketsAt(TCP6, 6, v6, 28028, true).map((s) => s.inode)).toEqual([10555, 9680]);
    expect(socketsAt(TCP6, 6, v4, 28029, true).map((s) => [s.inode, s.remotePort])).toEqual([[9681, 40870]]);
    expect(socketsAt(TCP, 4, v4, 28029, true)).toEqual([]); // the dual-stack listener is in tcp6 only
    // Every row the full parse finds at that end, and no other.
    const all = parseProcNetTcp(TCP, 4, true).filter((s) => s.local === v4 && s.localPort === 28028);
    expect(socketsAt(TCP, 4, v4, 28028, true)).toEqual(all);
  });

  it("costs a string search on a table of ten thousand sockets", () => {
    const row = TCP.split("\n")[4] ?? ""; // the accepted socket
    const rows = Array.from({ length: 10_000 }, (_, i) => row.replace("0100007F:6D7C", `0100007F:${(0x8000 + i).toString(16).toUpperCase()}`));
    const big = [TCP.split("\n")[0], ...rows, row].join("\n");
    expect(socketsAt(big, 4, v4, 28028, true).map((s) => s.inode)).toEqual([9677]);
    expect(parseProcNetTcp(big, 4, true)).toHaveLength(10_001);
  });
});

describe("addressKey", () => {
  it("gives IPv4, IPv6 and IPv4-mapped addresses one form", () => {
    expect(addressKey("127.0.0.1")).toBe("00000000000000000000ffff7f000001");
    expect(addressKey("::ffff:127.0.0.1")).toBe(addressKey("127.0.0.1"));
    expect(addressKey("::FFFF:7f00:1")).toBe(addressKey("127.0.0.1"));
    expect(addressKey("::1")).toBe("00000000000000000000000000000001");
    expect(addressKey("[::1]")).toBe(addressKey("0:0:0:0:0:0:0:1"));
    expect(addressKey("fe80::1%eth0")).toBe("fe800000000000000000000000000001");
    expect(addressKey("2001:db8::")).toBe("20010db8000000000000000000000000");
    expect(addressKey("::")).toBe("0".repeat(32));
    expect(addressText(addressKey("10.0.0.2") ?? "")).toBe("10.0.0.2");
  });

  it("refuses what is no IP address", () => {
    for (const bad of [
      "",
      "localhost",
      "1.2.3",
      "1.2.3.4.5",
      "256.0.0.1",
      "1.2.3.-4",
      "1:2:3:4:5:6:7:8:9",
      "1::2::3",
      ":::",
      "gggg::1",
      "12345::",
      "1:2:3:4:5:6:7:8::",
      "::1.2.3",
      "1:2:3:4:5:6:7",
    ]) {
      expect(addressKey(bad), bad).toBeUndefined();
    }
  });
});
