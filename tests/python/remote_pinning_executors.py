"""Imported by the worker processes of test_remote_pinning.py (``servelab worker --import``):
registers ``affinity_log(path=...)``, an executor that appends, per batch, the worker process's
id and the affinity of the thread running the batch to ``path``."""

import os

import servelab


class AffinityLog:
    def __init__(self, path: str) -> None:
        self.path = path

    def run(self, batch) -> None:
        cpus = ",".join(map(str, sorted(os.sched_getaffinity(0))))
        with open(self.path, "a") as f:  # one short line per batch: appends do not interleave
            f.write(f"{os.getpid()} {cpus}\n")


def affinity_log(path=""):
    return AffinityLog(path)


servelab.register_executor("affinity_log", affinity_log, doc="Logs each batch's thread affinity.")
