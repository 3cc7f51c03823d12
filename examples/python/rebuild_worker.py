"""A rebuild worker in Python (python/README.md, "Rebuild workers").

    PYTHONPATH=build/release/python python3 examples/python/rebuild_worker.py [HOST:PORT] [--seed 1]

Pulls the node's rebuild tasks (blobs whose KV bytes were dropped, their tokens kept), has
the model recompute each blob from its tokens, and fills it; the node takes only bytes equal
to the original's. strata.ReferenceModel of the seed the blobs were written with stands in
for the real model; a real worker passes its own function of a RebuildTask.
"""
import argparse

import strata
import strata.rebuild

ap = argparse.ArgumentParser()
ap.add_argument("node", nargs="?")
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--idle-exit", type=float, default=5.0)
args = ap.parse_args()

models = {}  # one model per layout the tasks name


def compute(task: strata.RebuildTask) -> bytearray:
    layout = task.ns.layout
    if layout.spec not in models:
        models[layout.spec] = strata.ReferenceModel(layout, seed=args.seed)
    return models[layout.spec].compute_rebuild(task)  # checked against the original's checksums


with strata.Client(args.node) as client:
    summary = strata.rebuild.run_worker(client, compute, idle_exit=args.idle_exit)
print(f"rebuilt {summary.rebuilt} blobs ({summary.bytes_written} bytes), {summary.existed} already filled, "
      f"{summary.failed} failed, {summary.pulls} pulls")
