"""Rebuild workers in Python: pull tasks, compute their KV, fill them (python/README.md).

A node that dropped a blob's KV bytes keeps its tokens (tier TEXT) and queues a rebuild
when asked (``Client.request_rebuild``, ``Client.prefetch``). A worker pulls tasks, computes
each blob's KV from its tokens with the model that wrote it, and writes it back; the node
accepts only bytes whose chunk checksums equal the original's.

    model = strata.ReferenceModel(layout, seed=7)
    summary = strata.rebuild.run_worker(client, model.compute_rebuild, idle_exit=5.0)

``compute`` may be any function of a RebuildTask returning the blob's bytes (a torch model
on a GPU, say): ``task.sequence_tokens`` are the sequence's tokens through the blob's end,
``task.first_page`` and ``task.pages`` the blob's pages.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Optional

from ._strata import Error, RebuildTask


@dataclasses.dataclass
class RebuildSummary:
    pulls: int = 0
    tasks: int = 0
    rebuilt: int = 0
    existed: int = 0       # another writer filled it first
    failed: int = 0        # compute or write failed (the task goes back to the queue)
    bytes_written: int = 0
    errors: list = dataclasses.field(default_factory=list)  # (task, exception), the first 16


def run_worker(client: Any, compute: Callable[[RebuildTask], Any], *, max_tasks: int = 0,
               idle_exit: float = 5.0, batch: int = 16, poll_wait: float = 1.0,
               stop: Optional[Callable[[], bool]] = None) -> RebuildSummary:
    """Pulls and rebuilds tasks until ``max_tasks`` were handled (0: no limit), no task came
    for ``idle_exit`` seconds, or ``stop()`` is true. Tasks whose compute or write fails are
    counted and left to expire (the node queues them again)."""
    summary = RebuildSummary()
    idle_since = time.monotonic()
    while not (stop and stop()):
        if max_tasks and summary.tasks >= max_tasks:
            break
        want = batch if not max_tasks else min(batch, max_tasks - summary.tasks)
        tasks = client.pull_rebuild_tasks(want, wait=poll_wait)
        summary.pulls += 1
        if not tasks:
            if time.monotonic() - idle_since >= idle_exit:
                break
            continue
        idle_since = time.monotonic()
        for task in tasks:
            summary.tasks += 1
            if task.segment_start_pages is not None:
                # The first blob of a cluster segment: its earlier tokens are on other nodes
                # (strata-worker handles these with ClusterClient.PrefixTokens).
                summary.failed += 1
                continue
            try:
                data = compute(task)
                result = client.write(task.ns, task.own_tokens(), data, parent=task.parent)
            except Error as e:
                summary.failed += 1
                if len(summary.errors) < 16:
                    summary.errors.append((task, e))
                continue
            if result.existed:
                summary.existed += 1
            else:
                summary.rebuilt += 1
                summary.bytes_written += len(memoryview(data).cast("B"))
    return summary
