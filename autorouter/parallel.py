"""Calls run at once in threads: shapely runs its geometry outside Python's lock, so independent passes over a
board's shapes (zone fill predictions, obstacle profiles) overlap on a machine with several cores, to the same
results as run one after another."""
from __future__ import annotations

import threading


def at_once(*calls) -> list:
    """The calls' results, the calls run at once in threads. Daemon threads: a Ctrl-C while they run stops the
    router at once, where a thread pool would hold its exit until every call is done (24 s on vme-wren)."""
    results: list = [None] * len(calls)

    def run(k: int) -> None:
        try:
            results[k] = (True, calls[k]())
        except BaseException as e:          # handed to the caller, as if it had made the call
            results[k] = (False, e)
    threads = [threading.Thread(target=run, args=(k,), daemon=True) for k in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for ok, value in results:
        if not ok:
            raise value
    return [value for _, value in results]
