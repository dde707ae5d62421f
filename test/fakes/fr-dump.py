#!/usr/bin/env python3
"""Writes PyTorch Flight Recorder dumps as Python itself pickles them, for the tests.

stdin: JSON {"dumps": [{"path": "<file>", "dump": {...}}, ...]}. Each dump is the dict PyTorch's
FlightRecorder dumps (version, pg_config, comm_lib_version, pg_status, entries), written with
pickle protocol 2, the protocol of PyTorch's own dumps. JSON has no tuples and no integer keys, so:
every "process_group" list becomes a tuple, as PyTorch writes it, and an object
{"__dict_items__": [[key, value], ...]} becomes a dict with those keys (integers allowed), as the
pg_config of 1.x dumps ({pg_id: [ranks]}). Prints the number of files written.
"""
import json
import pickle
import sys


def convert(v, key=None):
    if isinstance(v, dict):
        if set(v) == {"__dict_items__"}:
            return {convert(k): convert(x) for k, x in v["__dict_items__"]}
        return {k: convert(x, k) for k, x in v.items()}
    if isinstance(v, list):
        items = [convert(x) for x in v]
        return tuple(items) if key == "process_group" else items
    return v


def main():
    spec = json.load(sys.stdin)
    for d in spec["dumps"]:
        with open(d["path"], "wb") as f:
            pickle.dump(convert(d["dump"]), f, protocol=2)
    print(len(spec["dumps"]))


if __name__ == "__main__":
    main()
