#!/usr/bin/env python3
"""Writes large PyTorch Flight Recorder dumps: hostile ones, small files that name one large object
many times, and the largest legitimate one a job writes.

Python's pickle writes an object once and every later use of the same object as a memo reference
(BINGET / LONG_BINGET, a few bytes), as PyTorch's own dumps refer to their frames. A reader that
expands every reference does the work of the whole object once per reference. The dumps have the
schema of the real ones (test/fixtures/fr/h100-2026-11-24/, dump version 2.10) and are written with
pickle protocol 2, like test/fakes/fr-dump.py and PyTorch itself.

  fr-big-dump.py shared-ranks OUT [--groups 4096] [--ranks 131072]
      pg_config holds --groups process groups that all share one rank-list string of --ranks
      ranks ("[0, 1, ..., 131071]", 937 KB), with each group's pg_status: a file of 1.4 MB.
  fr-big-dump.py shared-entry OUT [--refs 50000] [--tensors 64] [--dims 16]
      entries holds one entry --refs times, with --tensors input and output tensors of --dims
      dimensions each: a file of 104 KB.
  fr-big-dump.py large-job OUT [--ranks 131072] [--entries 20000] [--frames 20]
      a rank of a --ranks job of 8-way tensor, 16-way pipeline and data parallelism: rank 0's groups
      (default_pg of every rank, data, tensor, pipeline, model parallel), a full buffer of
      --entries collectives with --frames frames each, from a few hundred distinct frames.

Every kind takes --rank N (default 0), the dump's own `rank` key. Prints the size of the file
written, in bytes.
"""
import argparse
import os
import pickle


def base(rank):
    return {"version": "2.10", "pg_config": {}, "comm_lib_version": "2.28.9", "pg_status": {}, "entries": [], "rank": rank}


def shared_ranks(rank, groups, ranks):
    d = base(rank)
    # One str object: pickle writes it once and refers to it from every group.
    rank_list = "[" + ", ".join(str(r) for r in range(ranks)) + "]"
    for g in range(groups):
        d["pg_config"][str(g)] = {"name": str(g), "desc": f"group_{g}", "ranks": rank_list}
        d["pg_status"][str(g)] = {"last_enqueued_collective": 1, "last_started_collective": -1, "last_completed_collective": 1}
    return d


def shared_entry(rank, refs, tensors, dims):
    d = base(rank)
    d["pg_config"]["0"] = {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}
    d["pg_status"]["0"] = {"last_enqueued_collective": 1, "last_started_collective": -1, "last_completed_collective": 1}
    sizes = [[2] * dims for _ in range(tensors)]
    entry = {
        "frames": [{"name": "all_reduce", "filename": "/opt/job/train.py", "line": 41}],
        "record_id": 0,
        "pg_id": 0,
        "process_group": ("0", "default_pg"),
        "collective_seq_id": 1,
        "p2p_seq_id": 0,
        "op_id": 1,
        "profiling_name": "nccl:all_reduce",
        "time_created_ns": 1795485086000000000,
        "input_sizes": sizes,
        "input_dtypes": ["Float"] * tensors,
        "output_sizes": sizes,
        "output_dtypes": ["Float"] * tensors,
        "state": "completed",
        "time_discovered_started_ns": None,
        "time_discovered_completed_ns": 1795485086009000000,
        "retired": True,
        "timeout_ms": 100000,
        "is_p2p": False,
    }
    # One dict object: every item of the list after the first is a memo reference to it.
    d["entries"] = [entry] * refs
    return d


def large_job(rank, ranks, n_entries, n_frames):
    d = base(rank)
    tp, pp = 8, 16
    dp = max(1, ranks // (tp * pp))
    groups = [
        ("0", "default_pg", list(range(ranks))),
        ("1", "data_parallel", [r * tp * pp for r in range(dp)]),
        ("2", "tensor_parallel", list(range(tp))),
        ("3", "pipeline_parallel", [s * tp for s in range(pp)]),
        ("4", "model_parallel", list(range(tp * pp))),
        ("5", "embedding", [0, (pp - 1) * tp]),
        ("6", "data_parallel_cp", [r * tp * pp for r in range(dp)]),
    ]
    for pg_id, (name, desc, members) in enumerate(groups):
        d["pg_config"][name] = {"name": name, "desc": desc, "ranks": "[" + ", ".join(str(r) for r in members) + "]"}
        d["pg_status"][str(pg_id)] = {"last_enqueued_collective": n_entries, "last_started_collective": -1, "last_completed_collective": n_entries - 1}
    # A few hundred distinct frames, each one dict that the entries refer to, as PyTorch pickles them.
    torch = "/opt/torch/.venv/lib/python3.12/site-packages/torch"
    frames = [{"name": f"fn_{i}", "filename": f"{torch}/nn/modules/module_{i % 40}.py", "line": 100 + i} for i in range(400)]
    ops = ["nccl:all_reduce", "nccl:_all_gather_base", "nccl:_reduce_scatter_base", "nccl:broadcast"]
    entries = []
    for i in range(n_entries):
        name, desc, _ = groups[i % 4]
        seq = i // 4 + 1
        shapes = [[4096, 1024 + (i % 7)], [1024], [8, 512, 64]][: 1 + i % 3]
        entries.append({
            "frames": [frames[(i * 7 + k * 13) % len(frames)] for k in range(n_frames)],
            "record_id": i,
            "pg_id": i % 4,
            "process_group": (name, desc),
            "collective_seq_id": seq,
            "p2p_seq_id": 0,
            "op_id": seq,
            "profiling_name": ops[i % 4],
            "time_created_ns": 1795485086000000000 + i * 50000000,
            "input_sizes": shapes,
            "input_dtypes": ["BFloat16"] * len(shapes),
            "output_sizes": [list(s) for s in shapes],
            "output_dtypes": ["BFloat16"] * len(shapes),
            "state": "completed" if i < n_entries - 1 else "scheduled",
            "time_discovered_started_ns": None,
            "time_discovered_completed_ns": 1795485086009000000 + i * 50000000 if i < n_entries - 1 else None,
            "retired": i < n_entries - 1,
            "timeout_ms": 600000,
            "is_p2p": False,
        })
    d["entries"] = entries
    return d


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kind", choices=["shared-ranks", "shared-entry", "large-job"])
    p.add_argument("out")
    p.add_argument("--rank", type=int, default=0, help="the dump's own rank key")
    p.add_argument("--groups", type=int, default=4096)
    p.add_argument("--ranks", type=int, default=131072)
    p.add_argument("--refs", type=int, default=50000)
    p.add_argument("--tensors", type=int, default=64)
    p.add_argument("--dims", type=int, default=16)
    p.add_argument("--entries", type=int, default=20000)
    p.add_argument("--frames", type=int, default=20)
    a = p.parse_args()
    if a.kind == "shared-ranks":
        d = shared_ranks(a.rank, a.groups, a.ranks)
    elif a.kind == "shared-entry":
        d = shared_entry(a.rank, a.refs, a.tensors, a.dims)
    else:
        d = large_job(a.rank, a.ranks, a.entries, a.frames)
    with open(a.out, "wb") as f:
        pickle.dump(d, f, protocol=2)
    print(os.path.getsize(a.out))


if __name__ == "__main__":
    main()
