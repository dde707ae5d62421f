/**
 * A bare client connection to a (fake) NCCL RAS service, for the fakes' selftests: send a line, wait
 * for a number of bytes, see when the server closes and when each chunk came. No protocol in it:
 * the tests speak NCCL's client protocol themselves. No vitest import.
 */
import { connect, type Socket } from "node:net";

export interface RawRas {
  sock: Socket;
  /** Everything received so far. */
  text(): string;
  /** Sends `line`, then waits until `expected`'s length in more bytes arrived (rejects after askTimeoutMs) and returns them. */
  ask(line: string, expected: string): Promise<string>;
  /** Resolves with everything received once the server closed the connection. */
  closed: Promise<string>;
  /** Whether the server closed the connection yet. */
  isClosed(): boolean;
  /** Arrival times (ms since connect) and texts of the chunks received. */
  chunks: { at: number; text: string }[];
}

export async function openRawRas(port: number, host = "127.0.0.1", askTimeoutMs = 20_000): Promise<RawRas> {
  const sock = connect(port, host);
  await new Promise<void>((resolve, reject) => sock.once("connect", resolve).once("error", reject));
  const t0 = Date.now();
  let buf = "";
  let ended = false;
  const chunks: { at: number; text: string }[] = [];
  const waiters: (() => void)[] = [];
  sock.setEncoding("latin1");
  sock.on("data", (d: string) => {
    buf += d;
    chunks.push({ at: Date.now() - t0, text: d });
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<string>((resolve) =>
    sock.once("close", () => {
      ended = true;
      resolve(buf);
    }),
  );
  return {
    sock,
    chunks,
    closed,
    text: () => buf,
    isClosed: () => ended,
    ask: async (line, expected) => {
      const from = buf.length;
      sock.write(line);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${JSON.stringify(expected)}; got ${JSON.stringify(buf.slice(from))}`)), askTimeoutMs);
        const check = (): void => {
          if (buf.length >= from + expected.length) {
            clearTimeout(timer);
            resolve();
          } else waiters.push(check);
        };
        check();
      });
      return buf.slice(from);
    },
  };
}
