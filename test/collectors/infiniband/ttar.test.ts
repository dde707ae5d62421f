import { lstatSync, readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readCapture } from "../../helpers/fixtures.js";
import { expandPathDump, expandTtar, makeTempDir, removeTree } from "../../helpers/ttar.js";

const made: string[] = [];
const tmp = (): string => {
  const d = makeTempDir("ringwatch-ttar-");
  made.push(d);
  return d;
};
afterAll(() => made.forEach(removeTree));

describe("expandTtar", () => {
  it("expands node_exporter's sys.ttar section into a tree with contents and modes", () => {
    const root = expandTtar(readCapture("tools/ib_sysfs/01-node_exporter-sys-ttar-i40iw0-mlx4_0.txt"), tmp());
    const ib = join(root, "sys/class/infiniband");
    expect(readdirSync(ib).sort()).toEqual(["i40iw0", "mlx4_0"]);
    expect(readFileSync(join(ib, "mlx4_0/ports/1/counters/port_xmit_wait"), "utf8")).toBe("4294967295\n");
    expect(readFileSync(join(ib, "i40iw0/ports/1/counters/symbol_error"), "utf8")).toBe("N/A (no PMA)\n");
    expect(readFileSync(join(ib, "mlx4_0/ports/2/rate"), "utf8")).toBe("40 Gb/sec (4X QDR)\n");
    expect(statSync(join(ib, "i40iw0/ports/1/link_layer")).mode & 0o777).toBe(0o664);
    expect(statSync(join(ib, "mlx4_0/ports")).mode & 0o777).toBe(0o755);
    expect(readdirSync(join(ib, "mlx4_0/ports/2/counters_ext"))).toHaveLength(8);
  });

  it("expands procfs' fixtures.ttar section: EOF marker and multi-line files", () => {
    const root = expandTtar(readCapture("tools/ib_sysfs/02-procfs-fixtures-ttar-hfi1_0-mlx4_0-mlx5_0.txt"), tmp());
    const ib = join(root, "fixtures/sys/class/infiniband");
    expect(readdirSync(ib).sort()).toEqual(["hfi1_0", "mlx4_0", "mlx5_0"]);
    // `0a7f:bc12:45ef:d23bEOF`: the file has no trailing newline.
    expect(readFileSync(join(ib, "mlx5_0/node_guid"), "utf8")).toBe("0a7f:bc12:45ef:d23b");
    // `Lines: 2`: the link_layer file of mlx4_0 port 2 holds an extra empty line.
    expect(readFileSync(join(ib, "mlx4_0/ports/2/link_layer"), "utf8")).toBe("InfiniBand\n\n");
    expect(readFileSync(join(ib, "mlx5_0/ports/1/hw_counters/rx_write_requests"), "utf8")).toBe("742114\n");
  });

  it("handles symlinks, empty files, NULLBYTE and escaped EOF", () => {
    const text = [
      "# Archive created by ttar -c -f x.ttar a",
      "Directory: a",
      "Mode: 755",
      "# ttar - - -",
      "Path: a/empty",
      "Lines: 0",
      "Mode: 600",
      "Path: a/escaped",
      "Lines: 2",
      "say \\EOF and \\NULLBYTE",
      "xNULLBYTEyEOF",
      "Mode: 644",
      "Path: a/link",
      "SymlinkTo: ../a/escaped",
      "# ttar - - -",
    ].join("\n");
    const root = expandTtar(text, tmp());
    expect(readFileSync(join(root, "a/empty"), "utf8")).toBe("");
    expect(statSync(join(root, "a/empty")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(root, "a/escaped"), "utf8")).toBe("say EOF and NULLBYTE\nx\u0000y");
    expect(lstatSync(join(root, "a/link")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(root, "a/link"))).toBe("../a/escaped");
  });

  it("rejects unknown lines, escaping paths and short archives", () => {
    expect(() => expandTtar("Bogus: x\n", tmp())).toThrow(/unknown line 1/);
    expect(() => expandTtar("Path: ../evil\nLines: 0\n", tmp())).toThrow(/escapes/);
    expect(() => expandTtar("Path: /etc/evil\nLines: 0\n", tmp())).toThrow(/escapes/);
    expect(() => expandTtar("Path: a\nLines: 2\nonly one\n", tmp())).toThrow(/early/);
  });
});

describe("expandPathDump (the gpud `<path>:<content>` capture)", () => {
  it("rebuilds the tree, splitting at the first colon, without trailing newlines", () => {
    const root = expandPathDump(readCapture("tools/ib_sysfs/03-gpud-h100-8x-cx7-ndr400-plus-bond-eth.txt"), tmp(), "sys/class/infiniband");
    const ib = join(root, "sys/class/infiniband");
    expect(readdirSync(ib).sort()).toEqual(["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9", "mlx5_bond_0"]);
    expect(readFileSync(join(ib, "mlx5_0/ports/1/state"), "utf8")).toBe("4: ACTIVE");
    expect(readFileSync(join(ib, "mlx5_bond_0/ports/1/rate"), "utf8")).toBe("200 Gb/sec (2X NDR)");
    expect(readdirSync(join(ib, "mlx5_0/ports/1/counters"))).toHaveLength(21);
  });

  it("rejects lines without a path", () => {
    expect(() => expandPathDump(":value\n", tmp())).toThrow(/line 1/);
  });
});
