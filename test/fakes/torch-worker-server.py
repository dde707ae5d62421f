#!/usr/bin/env python3
# A fake rank's PyTorch worker server for tests: a real Python process whose main thread is stuck
# where a rank is stuck, serving its stacks on a Unix socket as PyTorch's worker server does
# (torch/csrc/distributed/c10d/control_plane/WorkerServer.cpp: HTTP on a Unix socket, refusing a
# path that exists; PythonHandlers.cpp: `POST /handler/dump_traceback` runs
# faulthandler.dump_traceback(fd, all_threads=True) into a temporary file and answers its text,
# text/plain, 200; an unknown handler is 404 `Handler <name> not found: ...`).
#   argv: <socket path> <modules dir: a site-packages folder, so that the frames read as torch's> <where>
#     where: collective  the main thread waits in all_reduce of <modules dir: a site-packages folder, so that the frames read as torch's>/torch/distributed/distributed_c10d.py
#            dataloader  the main thread waits in next_batch (train.py, beside the modules dir: the job's own code) -> queue.get
#            gil         the handler never answers (a stuck C call holds the GIL: here, a sleep)
# Prints "ready" once listening. SIGTERM ends it.
import faulthandler, http.server, os, queue, signal, socketserver, sys, tempfile, threading

sock, mods, where = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(os.path.join(mods, "torch", "distributed"), exist_ok=True)
for f, text in [
    ("torch/__init__.py", ""),
    ("torch/distributed/__init__.py", ""),
    ("torch/distributed/distributed_c10d.py", "def all_reduce(done):\n    done.wait()\n"),
    ("../train.py", "def next_batch(q):\n    return q.get()\n\ndef train_step(q):\n    return next_batch(q)\n"),
]:
    p = os.path.join(mods, f)
    if not os.path.exists(p):
        with open(p, "w") as out:
            out.write(text)
sys.path.insert(0, mods)
sys.path.insert(0, os.path.dirname(os.path.abspath(mods)))  # train.py: the job's own code, beside site-packages
if os.path.exists(sock):
    sys.exit(f"{sock} already exists")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        name = self.path.split("?")[0].removeprefix("/handler/")
        if name != "dump_traceback":
            return self.answer(404, f"Handler {name} not found: ")
        if where == "gil":
            threading.Event().wait(3600)
        with tempfile.TemporaryFile(mode="w+") as f:
            faulthandler.dump_traceback(f, all_threads=True)
            f.seek(0)
            self.answer(200, f.read())


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        conn, _ = self.socket.accept()
        return conn, ("local", 0)


server = Server(sock, Handler)
threading.Thread(target=server.serve_forever, name="worker_server", daemon=True).start()
signal.signal(signal.SIGTERM, lambda *a: (os.unlink(sock), os._exit(0)))
print("ready", flush=True)
if where == "dataloader":
    import train

    train.train_step(queue.Queue())
else:
    from torch.distributed import distributed_c10d

    distributed_c10d.all_reduce(threading.Event())
