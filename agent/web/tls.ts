/**
 * tls_server_config → what node:tls needs: the secure-context options (certificate, key, client
 * CAs, versions, ciphers, curves), the server's client-certificate policy, and the checks node:tls
 * cannot make during the handshake (RequireAnyClientCert, VerifyClientCertIfGiven,
 * client_allowed_sans), made on each connection once it is secure.
 */
import { readFileSync } from "node:fs";
import { createSecureContext, type SecureContextOptions, type TLSSocket } from "node:tls";
import { CIPHER_SUITES, CURVES, TLS_VERSIONS, WebConfigError, type TlsServerSettings } from "./config.js";

/** TLS 1.3 suites stay on whatever cipher_suites says (Go does not let them be configured either). */
const TLS13_SUITES = "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256";

export interface TlsMaterial {
  context: SecureContextOptions;
  /** node:tls server options that are not part of the secure context. */
  requestCert: boolean;
  rejectUnauthorized: boolean;
  settings: TlsServerSettings;
  /** Files this material was read from, watched for changes (certificate rotation). */
  files: string[];
}

function readPem(path: string, what: string, configPath: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new WebConfigError(`web config file ${configPath}: failed to read ${what} (${path}): ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

function oneLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split("\n")[0] ?? "";
}

/** Reads the certificate, key and client CAs and checks that node:tls accepts them; throws WebConfigError. */
export function loadTlsMaterial(settings: TlsServerSettings, configPath: string): TlsMaterial {
  const cert = settings.certFile !== undefined ? readPem(settings.certFile, "cert_file", configPath) : (settings.cert ?? "");
  const key = settings.keyFile !== undefined ? readPem(settings.keyFile, "key_file", configPath) : (settings.key ?? "");
  const ca = settings.clientCaFile !== undefined ? readPem(settings.clientCaFile, "client_ca_file", configPath) : settings.clientCa;
  const context: SecureContextOptions = {
    cert,
    key,
    minVersion: TLS_VERSIONS[settings.minVersion],
    maxVersion: TLS_VERSIONS[settings.maxVersion],
    honorCipherOrder: settings.preferServerCipherSuites,
  };
  if (ca !== undefined) context.ca = ca;
  const ciphers = settings.cipherSuites.map((c) => CIPHER_SUITES[c]).filter((c): c is string => typeof c === "string");
  if (ciphers.length > 0) context.ciphers = `${ciphers.join(":")}:${TLS13_SUITES}`;
  if (settings.curvePreferences.length > 0) context.ecdhCurve = settings.curvePreferences.map((c) => CURVES[c]).join(":");
  try {
    createSecureContext(context);
  } catch (err) {
    const certFrom = settings.certFile !== undefined ? `cert_file ${settings.certFile}` : "cert";
    const keyFrom = settings.keyFile !== undefined ? `key_file ${settings.keyFile}` : "key";
    throw new WebConfigError(`web config file ${configPath}: failed to load the TLS certificate and key (${certFrom}, ${keyFrom}): ${oneLine(err)}`);
  }
  const auth = settings.clientAuth;
  return {
    context,
    requestCert: auth !== "NoClientCert",
    // node:tls can refuse a missing or unverified certificate itself only in this mode; the others are checked in checkClient().
    rejectUnauthorized: auth === "RequireAndVerifyClientCert",
    settings,
    files: [settings.certFile, settings.keyFile, settings.clientCaFile].filter((f): f is string => f !== undefined),
  };
}

/** "DNS:a, IP Address:1.2.3.4, email:x@y, URI:spiffe://..." → the values. */
function sanValues(subjectaltname: string | undefined): string[] {
  if (!subjectaltname) return [];
  const out: string[] = [];
  for (const part of subjectaltname.split(/,\s*/)) {
    const colon = part.indexOf(":");
    if (colon < 0) continue;
    const kind = part.slice(0, colon);
    const value = part.slice(colon + 1);
    out.push(value);
    if (kind === "IP Address" && value.includes(":")) {
      try {
        out.push(new URL(`http://[${value}]/`).hostname.slice(1, -1)); // IPv6 in its short form, as Go prints it
      } catch {
        // not an address after all
      }
    }
  }
  return out;
}

/**
 * The client-certificate checks node:tls leaves to the application. Returns why the connection
 * must be closed, or undefined when it may go on.
 */
export function checkClient(socket: TLSSocket, material: TlsMaterial): string | undefined {
  const { clientAuth, clientAllowedSans } = material.settings;
  if (clientAuth === "NoClientCert" || clientAuth === "RequestClientCert") return undefined;
  const peer = socket.getPeerCertificate();
  const presented = peer !== null && typeof peer === "object" && Object.keys(peer).length > 0;
  if (!presented && clientAuth !== "VerifyClientCertIfGiven") return "client did not present a certificate";
  if (presented && clientAuth !== "RequireAnyClientCert" && !socket.authorized) return `client certificate not verified: ${String(socket.authorizationError)}`;
  if (clientAllowedSans !== undefined) {
    const sans = sanValues(peer.subjectaltname);
    if (!sans.some((s) => clientAllowedSans.includes(s))) return "client certificate has none of the allowed SANs";
  }
  return undefined;
}
