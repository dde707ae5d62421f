/** `host:port` as logs show an address: an IPv6 host in brackets, no host (all interfaces) as `:port`. */
export function formatHostPort(host: string | undefined, port: number): string {
  return `${host?.includes(":") ? `[${host}]` : (host ?? "")}:${port}`;
}
