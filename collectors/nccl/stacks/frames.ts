/**
 * Frames as the grouping compares them and the verdict shows them: files made package-relative
 * (`/opt/venv/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py` and py-spy's
 * `torch/distributed/distributed_c10d.py` are one file), line numbers kept for display only, and
 * the frames that say where a thread is: in a collective, in the job's own code, or in a library.
 */
import { normalizeFile } from "../verdict/python-file.js";
import type { StackFrame, StackThread } from "./types.js";

/** A native frame py-spy could not name: `0x7f9ba3169d71 (libc.so.6)`; its address differs in every process. */
export function isAddressFrame(f: StackFrame): boolean {
  const n = f.function;
  if (n.length < 3 || n.charCodeAt(0) !== 48 || (n.charCodeAt(1) !== 120 && n.charCodeAt(1) !== 88)) return false;
  for (let i = 2; i < n.length; i++) {
    const c = n.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70))) return false;
  }
  return true;
}

/** A frame of native code (`py-spy dump --native`): no line, and no Python file (`libc.so.6`, `libtorch_cpu.so`, `python3.12`). */
export function isNativeFrame(f: StackFrame): boolean {
  return f.line === undefined && !f.file.endsWith(".py") && !f.file.endsWith(".pyx");
}

/** The standard library's modules a training job's threads wait in, as py-spy prints their files (no folder). */
const STDLIB_FILES = new Set([
  "threading.py",
  "queue.py",
  "selectors.py",
  "subprocess.py",
  "socket.py",
  "ssl.py",
  "contextlib.py",
  "runpy.py",
  "functools.py",
  "pickle.py",
  "copy.py",
  "weakref.py",
  "_weakrefset.py",
  "warnings.py",
  "os.py",
  "shutil.py",
  "tempfile.py",
  "codecs.py",
  "typing.py",
  "abc.py",
]);

/** The standard library's packages and the frameworks a job's code calls into. */
const LIBRARY_PACKAGES = new Set([
  "multiprocessing",
  "concurrent",
  "asyncio",
  "logging",
  "importlib",
  "json",
  "http",
  "urllib",
  "email",
  "encodings",
  "collections",
  "torch",
  "torchvision",
  "torchaudio",
  "deepspeed",
  "transformers",
  "accelerate",
  "megatron",
  "apex",
  "numpy",
  "tqdm",
  "lightning",
  "pytorch_lightning",
  "lightning_fabric",
  "triton",
  "ray",
  "horovod",
  "fairscale",
  "datasets",
  "safetensors",
  "huggingface_hub",
  "peft",
  "tensorboard",
  "wandb",
]);

/** Whether a frame is the standard library's, an installed package's or native (display only: the job's own code is the rest). */
export function isLibraryFrame(f: StackFrame): boolean {
  if (isNativeFrame(f)) return true;
  const file = f.file.indexOf("\\") >= 0 ? f.file.replaceAll("\\", "/") : f.file;
  const norm = normalizeFile(file);
  if (norm !== (file.startsWith("./") ? file.slice(2) : file)) return true; // it was under site-packages or lib/pythonX.Y
  const slash = norm.indexOf("/");
  return slash < 0 ? STDLIB_FILES.has(norm) : LIBRARY_PACKAGES.has(norm.slice(0, slash));
}

/** PyTorch's, DeepSpeed's and Horovod's collective functions, by name. */
const COLLECTIVE_FUNCTIONS = new Set([
  "all_reduce",
  "all_gather",
  "all_gather_into_tensor",
  "_all_gather_base",
  "all_gather_object",
  "all_gather_coalesced",
  "reduce_scatter",
  "reduce_scatter_tensor",
  "_reduce_scatter_base",
  "broadcast",
  "broadcast_object_list",
  "_broadcast_coalesced",
  "barrier",
  "monitored_barrier",
  "all_to_all",
  "all_to_all_single",
  "reduce",
  "gather",
  "gather_object",
  "scatter",
  "scatter_object_list",
  "send",
  "recv",
  "batch_isend_irecv",
  "allreduce",
  "allgather",
  "synchronize",
]);

/**
 * A frame inside a collective: in torch.distributed's c10d (`distributed_c10d.py`,
 * `c10d_logger.py`, the functional collectives), DeepSpeed's or Horovod's communication code, a
 * collective function by name, or native c10d/NCCL/Gloo code. torchrun's launcher frames
 * (`torch/distributed/elastic/`, `run.py`) are no collective: every rank's stack holds them.
 */
export function isCollectiveFrame(f: StackFrame): boolean {
  if (isNativeFrame(f)) {
    const n = f.function;
    return n.includes("c10d::") || n.includes("ProcessGroupNCCL") || n.startsWith("nccl") || n.includes("gloo::");
  }
  const file = normalizeFile(f.file);
  if (file.startsWith("torch/distributed/elastic/") || file.startsWith("torch/distributed/launcher/") || file === "torch/distributed/run.py") return false;
  if (
    file === "torch/distributed/distributed_c10d.py" ||
    file === "torch/distributed/c10d_logger.py" ||
    file.startsWith("torch/distributed/_functional_collectives") ||
    file.startsWith("deepspeed/comm/") ||
    file.startsWith("horovod/")
  ) {
    return true;
  }
  return COLLECTIVE_FUNCTIONS.has(f.function) && (file.startsWith("torch/") || file.startsWith("deepspeed/") || file.startsWith("megatron/"));
}

/** Frames looked at, innermost first, for whether a thread waits in a collective (the outer ones are the training loop's, the same on every rank). */
const COLLECTIVE_DEPTH = 12;

/** Whether a thread is inside a collective: one of its innermost frames is. */
export function inCollective(t: StackThread): boolean {
  const n = Math.min(t.frames.length, COLLECTIVE_DEPTH);
  for (let i = 0; i < n; i++) if (isCollectiveFrame(t.frames[i] as StackFrame)) return true;
  return false;
}

/** `torch/utils/data/dataloader.py:1133 _try_get_data`; a native frame: `pthread_cond_timedwait (libc.so.6)`. */
export function frameText(f: StackFrame): string {
  if (f.line === undefined) return isNativeFrame(f) ? `${f.function} (${f.file})` : `${normalizeFile(f.file)} ${f.function}`;
  return `${normalizeFile(f.file)}:${f.line} ${f.function}`;
}

/** What identifies a frame across ranks: its function and package-relative file, no line; undefined for an address, which differs in every process. */
export function frameKey(f: StackFrame): string | undefined {
  return isAddressFrame(f) ? undefined : `${f.function}\u0000${normalizeFile(f.file)}`;
}
