import { describe, expect, it } from "vitest";
import type { NetLink } from "../../../collectors/mtu/link.js";
import { parseIpJson } from "../../../collectors/mtu/parse-ip-json.js";
import { parseIpText } from "../../../collectors/mtu/parse-ip-text.js";
import { listFixtures, readCapture } from "../../helpers/fixtures.js";

const L = (device: string, mtu: number | undefined, linkType: string | undefined, operstate: string | undefined, kind?: string): NetLink => ({
  device,
  mtu,
  linkType,
  operstate,
  kind,
});

/** Every real capture in tools/ip_link/, the parser that reads it, and what it must yield. */
const GOLDEN: Record<string, { form: "json" | "text"; links: NetLink[] }> = {
  "02-usernetes-azure-ip-addr-ipoib-4092-docker0.txt": {
    form: "text",
    links: [
      L("lo", 65536, "loopback", "UNKNOWN"),
      L("eth0", 1500, "ether", "UP"),
      L("enP27815s1", 1500, "ether", "UP"),
      L("ibP257s71127", 4092, "infiniband", "DOWN"),
      L("docker0", 1500, "ether", "DOWN"),
    ],
  },
  "03-rapids-azure-nd40rs-v2-ip-addr-ipoib-4092.txt": {
    form: "text",
    links: [
      L("lo", 65536, "loopback", "UNKNOWN"),
      L("eth0", 1500, "ether", "UP"),
      L("eth1", 1500, "ether", "DOWN"),
      L("enP44906s1", 1500, "ether", "UP"),
      L("ibP59423s2", 4092, "infiniband", "DOWN"),
    ],
  },
  "04-nmstate-655-ib0-connected-65520.txt": {
    form: "text",
    links: [L("ib0", 65520, "infiniband", "UP")],
  },
  "05-trinity-187-old-iproute-ip-a-grep-mtu-ib0-4092.txt": {
    form: "text",
    // grep'd header lines only: no link/ line, so no link type
    links: [
      L("lo", 65536, undefined, "UNKNOWN"),
      L("eno1", 1500, undefined, "UP"),
      L("eno2", 1500, undefined, "DOWN"),
      L("eno3", 1500, undefined, "DOWN"),
      L("eno4", 1500, undefined, "DOWN"),
      L("ib0", 4092, undefined, "DOWN"),
    ],
  },
  "06-lkml-ip-d-link-mlx5_ib0-ipoib-details-UNATTRIB.txt": {
    form: "text",
    links: [L("mlx5_ib0", 2044, "infiniband", "UP", "ipoib")],
  },
  "07-usernetes-azure-ip-json-pretty-flannel.txt": {
    form: "json",
    links: [L("flannel.1", 1450, "ether", "UNKNOWN")],
  },
  "90-local-sandbox-iproute2-6.1-ip-j-d-link-ifb.txt": {
    form: "json",
    links: [
      L("lo", 65536, "loopback", "UNKNOWN"),
      L("ifb0", 1500, "ether", "DOWN", "ifb"),
      L("ifb1", 1500, "ether", "DOWN", "ifb"),
      L("eth0", 1400, "ether", "UP"),
    ],
  },
  "91-local-sandbox-iproute2-6.1-ip-d-link-ifb.txt": {
    form: "text",
    links: [
      L("lo", 65536, "loopback", "UNKNOWN"),
      L("ifb0", 1500, "ether", "DOWN", "ifb"),
      L("ifb1", 1500, "ether", "DOWN", "ifb"),
      L("eth0", 1400, "ether", "UP"),
    ],
  },
  "92-local-sandbox-iproute2-6.1-ip-j-addr.txt": {
    form: "json",
    // ip -j addr has no linkinfo
    links: [L("lo", 65536, "loopback", "UNKNOWN"), L("ifb0", 1500, "ether", "DOWN"), L("ifb1", 1500, "ether", "DOWN"), L("eth0", 1400, "ether", "UP")],
  },
};

function parse(file: string, form: "json" | "text"): NetLink[] {
  const text = readCapture(`tools/ip_link/${file}`);
  return form === "json" ? parseIpJson(text) : parseIpText(text).links;
}

describe("ip parsers on every real ip_link capture", () => {
  it("has a golden entry for each capture", () => {
    expect(listFixtures("tools/ip_link", ".txt")).toEqual(Object.keys(GOLDEN).sort());
  });

  for (const [file, g] of Object.entries(GOLDEN)) {
    it(`${g.form}: ${file}`, () => {
      expect(parse(file, g.form)).toEqual(g.links);
    });
  }

  it("text and JSON of the same host at the same moment agree", () => {
    expect(parse("91-local-sandbox-iproute2-6.1-ip-d-link-ifb.txt", "text")).toEqual(parse("90-local-sandbox-iproute2-6.1-ip-j-d-link-ifb.txt", "json"));
  });

  it("the text parser counts every interface header", () => {
    expect(parseIpText(readCapture("tools/ip_link/05-trinity-187-old-iproute-ip-a-grep-mtu-ib0-4092.txt")).headers).toBe(6);
  });
});

describe("parseIpJson", () => {
  it("strips @peer, skips entries without ifname, reads linkinfo kinds", () => {
    const text = JSON.stringify([
      {},
      { ifindex: 7, ifname: "eth0@if12", mtu: 1450, link_type: "ether", operstate: "UP", linkinfo: { info_kind: "veth" } },
      { ifname: "ib0.8001@ib0", mtu: 4092, link_type: "infiniband", operstate: "UP", linkinfo: { info_kind: "ipoib", info_data: { mode: "datagram" } } },
      { ifname: "bond0", mtu: 9000, link_type: "ether", operstate: "UP", linkinfo: { info_kind: "bond" } },
      { ifname: "enp1s0f0", mtu: 9000, link_type: "ether", operstate: "UP", linkinfo: { info_slave_kind: "bond" } },
    ]);
    expect(parseIpJson(text)).toEqual([
      L("eth0", 1450, "ether", "UP", "veth"),
      L("ib0.8001", 4092, "infiniband", "UP", "ipoib"),
      L("bond0", 9000, "ether", "UP", "bond"),
      L("enp1s0f0", 9000, "ether", "UP"),
    ]);
  });

  it("a non-numeric mtu is left out, not guessed", () => {
    expect(parseIpJson('[{"ifname":"x0","mtu":"1500"}]')).toEqual([L("x0", undefined, undefined, undefined)]);
  });

  it("throws on text that is not a JSON array", () => {
    expect(() => parseIpJson("")).toThrow(/ip JSON/);
    expect(() => parseIpJson('{"ifname":"eth0"}')).toThrow(/not an array/);
    expect(() => parseIpJson(readCapture("tools/ip_link/06-lkml-ip-d-link-mlx5_ib0-ipoib-details-UNATTRIB.txt"))).toThrow(/ip JSON/);
  });
});

describe("parseIpText", () => {
  it("reads @peer names, vlan kinds, and ignores non-kind lines after link/", () => {
    const text = [
      "12: eth0@if13: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 8950 qdisc noqueue state UP mode DEFAULT group default ",
      "    link/ether 0a:58:0a:f4:01:05 brd ff:ff:ff:ff:ff:ff link-netnsid 0 promiscuity 0 minmtu 68 maxmtu 65535 ",
      "    veth addrgenmode eui64 numtxqueues 1 numrxqueues 1 gso_max_size 65536 gso_max_segs 65535 ",
      "3: enp1s0f0: <BROADCAST,MULTICAST,SLAVE,UP,LOWER_UP> mtu 9000 qdisc mq master bond0 state UP mode DEFAULT group default qlen 1000",
      "    link/ether b8:ce:f6:00:00:01 brd ff:ff:ff:ff:ff:ff promiscuity 0 minmtu 68 maxmtu 9978 ",
      "    bond_slave state ACTIVE mii_status UP link_failure_count 0 perm_hwaddr b8:ce:f6:00:00:01 queue_id 0 addrgenmode none ",
      "    altname enp1s0np0",
      "4: ib0.8001@ib0: <BROADCAST,MULTICAST> mtu 2044 qdisc noop state DOWN mode DEFAULT group default qlen 256",
      "    link/infiniband 80:00:10:49:fe:80:00:00:00:00:00:00:00:00:00:00:00:00:00:01 brd 00:ff:ff:ff:ff:12:40:1b:80:01:00:00:00:00:00:00:ff:ff:ff:ff promiscuity 0 ",
      "    ipoib pkey  0x8001 mode  datagram umcast  0000 addrgenmode eui64 ",
      "5: bond0.100@bond0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc noqueue state LOWERLAYERDOWN mode DEFAULT group default qlen 1000",
      "    link/ether b8:ce:f6:00:00:01 brd ff:ff:ff:ff:ff:ff promiscuity 0 ",
      "    vlan protocol 802.1Q id 100 <REORDER_HDR> addrgenmode eui64 ",
      "6: wg0: <POINTOPOINT,NOARP,UP,LOWER_UP> mtu 1420 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000",
      "    link/none  promiscuity 0 minmtu 0 maxmtu 2147483552 ",
      "    altname wireguard0",
    ].join("\n");
    expect(parseIpText(text)).toEqual({
      headers: 5,
      links: [
        L("eth0", 8950, "ether", "UP", "veth"),
        L("enp1s0f0", 9000, "ether", "UP"),
        L("ib0.8001", 2044, "infiniband", "DOWN", "ipoib"),
        L("bond0.100", 9000, "ether", "LOWERLAYERDOWN", "vlan"),
        L("wg0", 1420, "none", "UNKNOWN"),
      ],
    });
  });

  it("an `inet` line after link/ in ip addr output is not a kind", () => {
    const links = parseIpText(readCapture("tools/ip_link/02-usernetes-azure-ip-addr-ipoib-4092-docker0.txt")).links;
    expect(links.every((l) => l.kind === undefined)).toBe(true);
    expect(links).toHaveLength(5);
  });

  it("only the line right after link/ can name the kind (defensive: later lines are other data)", () => {
    const text = [
      "3: enp1s0f0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc mq state UP mode DEFAULT group default qlen 1000",
      "    link/ether b8:ce:f6:00:00:01 brd ff:ff:ff:ff:ff:ff promiscuity 0 minmtu 68 maxmtu 9978 addrgenmode none ",
      "    altname enp1s0np0",
      "    vlan 0, spoof checking off, link-state auto, trust off",
    ].join("\n");
    expect(parseIpText(text).links).toEqual([L("enp1s0f0", 9000, "ether", "UP")]);
  });

  it("text that is not ip output has no headers", () => {
    expect(parseIpText('nvidia_peermem         16384  0\nOption "-d" is unknown\n')).toEqual({ links: [], headers: 0 });
  });

  it("keeps the first of repeated devices", () => {
    const text = "2: eth0: <UP> mtu 9000 state UP\n2: eth0: <UP> mtu 1500 state UP\n";
    expect(parseIpText(text).links).toEqual([L("eth0", 9000, undefined, "UP")]);
  });
});
