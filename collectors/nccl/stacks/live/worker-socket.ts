/**
 * Asks one rank's PyTorch worker server for its Python stacks: `POST /handler/dump_traceback` over
 * the Unix socket the job named (TORCH_WORKER_SERVER_SOCKET; docs/nccl.md, "PyTorch's worker
 * server: what it serves"). The answer is faulthandler's text (200, text/plain), or an error page.
 *
 * The socket is a path a job controls (docs/security.md), so nothing is connected to by path and
 * trusted:
 * 1. open(path, O_PATH | O_NOFOLLOW): a symlink put there is opened as the link itself and refused;
 * 2. fstat on that descriptor: a socket, owned by the rank process's user (or root);
 * 3. connected through /proc/self/fd/N: the very inode checked, never another one swapped in.
 * The answer is bounded in time and size; every step is an async call (the event loop never waits).
 */
import { close, constants, fstat, open, type Stats } from "node:fs";
import { request } from "node:http";

/** Linux O_PATH (node:fs does not export it). */
const O_PATH = 0o10000000;

/** How one ask ended: `ok` with the text, or why not. */
export type WorkerAnswer = { result: "ok"; text: string } | { result: "absent" | "untrusted" | "refused" | "timeout" | "too_large" | "error"; problem: string };

export interface WorkerAsk {
  timeoutMs: number;
  maxBytes: number;
  /** The users whose socket is believed: the rank process's uid (root is always). */
  ownerUid: number | undefined;
}

/** The handler that dumps every thread's stack with faulthandler (control_plane/PythonHandlers.cpp). */
export const DUMP_TRACEBACK = "/handler/dump_traceback";

function openPath(path: string): Promise<number> {
  return new Promise((res, rej) => open(path, O_PATH | constants.O_NOFOLLOW, (err, fd) => (err ? rej(err) : res(fd))));
}

function fstatFd(fd: number): Promise<Stats> {
  return new Promise((res, rej) => fstat(fd, (err, st) => (err ? rej(err) : res(st))));
}

/** The socket's descriptor, checked; or why it is not asked. */
async function openSocket(path: string, ownerUid: number | undefined): Promise<{ fd: number } | Exclude<WorkerAnswer, { result: "ok" }>> {
  let fd: number;
  try {
    fd = await openPath(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    if (code === "ENOENT" || code === "ENOTDIR") return { result: "absent", problem: `${path}: no such socket` };
    return { result: "error", problem: `${path}: ${code}` };
  }
  try {
    const st = await fstatFd(fd);
    if (!st.isSocket()) {
      close(fd, () => undefined);
      return { result: "untrusted", problem: `${path}: not a socket${st.isSymbolicLink() ? " (a symbolic link)" : ""}` };
    }
    if (st.uid !== 0 && (ownerUid === undefined || st.uid !== ownerUid)) {
      close(fd, () => undefined);
      return { result: "untrusted", problem: `${path}: owned by uid ${st.uid}, not by the rank process's user` };
    }
    return { fd };
  } catch (err) {
    close(fd, () => undefined);
    return { result: "error", problem: `${path}: ${(err as NodeJS.ErrnoException).code ?? "fstat failed"}` };
  }
}

/** Whether a socket is at path (lstat-free: the same O_PATH | O_NOFOLLOW open), for the auto source. */
export async function socketThere(path: string): Promise<boolean> {
  const fd = await openPath(path).catch(() => undefined);
  if (fd === undefined) return false;
  const st = await fstatFd(fd).catch(() => undefined);
  close(fd, () => undefined);
  return st?.isSocket() === true;
}

/** One `POST /handler/dump_traceback` to the worker server at path. Never throws. */
export async function askWorkerServer(path: string, ask: WorkerAsk): Promise<WorkerAnswer> {
  const opened = await openSocket(path, ask.ownerUid);
  if (!("fd" in opened)) return opened;
  const fd = opened.fd;
  try {
    return await post(`/proc/self/fd/${fd}`, path, ask);
  } finally {
    close(fd, () => undefined);
  }
}

function post(socketPath: string, path: string, ask: WorkerAsk): Promise<WorkerAnswer> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (a: WorkerAnswer): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve(a);
    };
    const timer = setTimeout(() => finish({ result: "timeout", problem: `${path}: no answer in ${ask.timeoutMs} ms` }), ask.timeoutMs);
    const req = request(
      { socketPath, method: "POST", path: DUMP_TRACEBACK, headers: { host: "localhost", "content-length": "0", connection: "close" }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const declared = Number(res.headers["content-length"] ?? "0");
        if (declared > ask.maxBytes) return finish({ result: "too_large", problem: `${path}: ${declared} bytes, over ${ask.maxBytes}` });
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > ask.maxBytes) return finish({ result: "too_large", problem: `${path}: over ${ask.maxBytes} bytes` });
          chunks.push(c);
        });
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          if (res.statusCode === 200) finish({ result: "ok", text });
          else finish({ result: "refused", problem: `${path}: HTTP ${res.statusCode ?? "?"}: ${text.trim().split("\n")[0]?.slice(0, 200) ?? ""}` });
        });
        res.on("error", (err) => finish({ result: "error", problem: `${path}: ${err.message}` }));
      },
    );
    req.on("error", (err: NodeJS.ErrnoException) => {
      const refused = err.code === "ECONNREFUSED" || err.code === "EACCES" || err.code === "ENOENT";
      finish({ result: refused ? "refused" : "error", problem: `${path}: ${err.code ?? err.message}` });
    });
    req.end();
  });
}
