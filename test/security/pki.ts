/**
 * A throw-away PKI made with the real openssl CLI: a CA, server certificates for 127.0.0.1 / ::1 /
 * localhost, and client certificates, each in PEM files in a temporary directory.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
}

export interface Issued {
  cert: string;
  key: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
}

const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

export function createCa(name = "ringwatch-test-ca", dir = mkdtempSync(join(tmpdir(), "rw-pki-"))): Pki {
  const caCert = join(dir, `${name}.crt`);
  const caKey = join(dir, `${name}.key`);
  openssl(
    [
      "req",
      "-x509",
      ...EC,
      "-keyout",
      caKey,
      "-out",
      caCert,
      "-days",
      "2",
      "-subj",
      `/CN=${name}`,
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
    ],
    dir,
  );
  return { dir, caCert, caKey };
}

/** A certificate signed by the CA; `san` like "DNS:localhost,IP:127.0.0.1". */
export function issue(pki: Pki, name: string, opts: { cn: string; san: string; usage: "serverAuth" | "clientAuth" }): Issued {
  const key = join(pki.dir, `${name}.key`);
  const csr = join(pki.dir, `${name}.csr`);
  const cert = join(pki.dir, `${name}.crt`);
  const ext = join(pki.dir, `${name}.ext`);
  writeFileSync(ext, `subjectAltName=${opts.san}\nextendedKeyUsage=${opts.usage}\nkeyUsage=critical,digitalSignature\nbasicConstraints=CA:FALSE\n`);
  openssl(["req", ...EC, "-keyout", key, "-out", csr, "-subj", `/CN=${opts.cn}`], pki.dir);
  openssl(["x509", "-req", "-in", csr, "-CA", pki.caCert, "-CAkey", pki.caKey, "-CAcreateserial", "-out", cert, "-days", "2", "-extfile", ext], pki.dir);
  return { cert, key };
}

export function serverCert(pki: Pki, name = "server", cn = "localhost"): Issued {
  return issue(pki, name, { cn, san: "DNS:localhost,IP:127.0.0.1,IP:::1", usage: "serverAuth" });
}

export function clientCert(pki: Pki, name = "client", cn = "prometheus"): Issued {
  return issue(pki, name, { cn, san: `DNS:${cn}`, usage: "clientAuth" });
}
