/**
 * A Python file as the verdicts name it: package-relative, so that a faulthandler dump's
 * `/opt/venv/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py` and py-spy's
 * `torch/distributed/distributed_c10d.py` are one file. Shared by the stack grouping
 * (collectors/nccl/stacks/) and the report's human form.
 */

/**
 * After the last `site-packages/` or `dist-packages/`; after a Python installation's
 * `lib/pythonX.Y/` (the standard library: `threading.py`); else as printed, without a leading `./`
 * (the job's own files; py-spy prints them relative already). Backslashes read as slashes.
 */
export function normalizeFile(file: string): string {
  const f = file.indexOf("\\") >= 0 ? file.replaceAll("\\", "/") : file;
  for (const marker of ["/site-packages/", "/dist-packages/"]) {
    const k = f.lastIndexOf(marker);
    if (k >= 0) return f.slice(k + marker.length);
  }
  const lib = f.lastIndexOf("/lib/python");
  if (lib >= 0) {
    const slash = f.indexOf("/", lib + 11);
    if (slash > 0 && slash - lib < 20) return f.slice(slash + 1);
  }
  return f.startsWith("./") ? f.slice(2) : f;
}
