"""Map points over workers and gather their outputs in order: the one implementation behind
``.step`` and ``.mc``, whatever runs the points.

A `concurrent.futures.Executor` runs chunks of points: in this process (one worker, the
plain loop), in a local pool of processes, or on a Dask cluster (`mna.analysis.cluster`).
Each worker receives the job (the circuit and what a point means) once, when it starts, and
then only chunks of points; outputs come back in the points' order whatever the number of
workers, with at most a few chunks per worker held in memory.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from typing import Any

from mna.progress import progress

CHUNKS_PER_WORKER = 4     # chunks of the points per worker: balance against per-task cost
MAX_CHUNK = 256           # points per chunk at most: bounds what is held at once
WINDOW_PER_WORKER = 2     # chunks submitted and not yet consumed, per worker

# the jobs this process runs, by token: set by `install` when a worker starts (a pool's
# initializer, a Dask worker plugin), read by `run_chunk` for every chunk it is sent
_JOBS: dict[str, Callable[[Any], Any]] = {}


def install(token: str, job: Callable[[Any], Any]) -> None:
    """Keep `job` in this process for the chunks sent with `token`."""
    _JOBS[token] = job


def uninstall(token: str) -> None:
    _JOBS.pop(token, None)


def run_chunk(token: str, points: Sequence) -> list:
    """The job's output at each of `points` (run in a worker)."""
    job = _JOBS[token]
    return [job(point) for point in points]


class InlineExecutor(Executor):
    """Runs each task at once in the calling process: one worker, no pool."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as error:
            future.set_exception(error)
        return future


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # not on Linux
        return os.cpu_count() or 1


@contextmanager
def executor(job: Callable[[Any], Any], workers: int = 0,
             scheduler: object = None) -> Iterator[tuple[Executor, str, int]]:
    """An executor whose workers hold `job`, the job's token, and how many points it runs
    at once. `workers`: processes (0: every core; 1: this process, no pool); `scheduler`:
    a Dask cluster (a ``distributed.Client``, an address, or ``"local"`` for a
    ``LocalCluster`` of `workers` processes started and stopped here)."""
    token = uuid.uuid4().hex
    workers = workers or cores()
    if scheduler is not None:
        from mna.analysis.cluster import dask_executor  # distributed: only when asked

        with dask_executor(token, job, scheduler, workers) as (pool, slots):
            yield pool, token, slots
    elif workers == 1:
        install(token, job)
        try:
            yield InlineExecutor(), token, 1
        finally:
            uninstall(token)
    else:
        # fork is quick but unsafe once threads run (a Dask client's, say): then spawn
        context = (multiprocessing.get_context("spawn") if threading.active_count() > 1
                   else multiprocessing.get_context())
        with ProcessPoolExecutor(workers, mp_context=context, initializer=install,
                                 initargs=(token, job)) as pool:
            yield pool, token, workers


def gather(pool: Executor, token: str, slots: int, points: Sequence,
           consume: Callable[[Any], None], label: str = "point") -> None:
    """Run the job at every point of `points` on `pool` and hand each output to `consume`,
    in the points' order; a progress bar counts the points done. Where points fail, the
    first one's error (in the points' order) is raised, once the points before it are
    consumed."""
    size = max(1, min(MAX_CHUNK, -(-len(points) // (slots * CHUNKS_PER_WORKER))))
    chunks = (points[start:start + size] for start in range(0, len(points), size))
    window = WINDOW_PER_WORKER * slots
    pending: dict[Future, int] = {}
    finished: dict[int, list] = {}
    submitted = consumed = 0
    with progress(len(points), label, label) as bar:
        while True:
            while len(pending) + len(finished) < window and (
                    chunk := next(chunks, None)) is not None:
                pending[pool.submit(run_chunk, token, chunk)] = submitted
                submitted += 1
            if not pending:
                return
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                finished[pending.pop(future)] = outcome = future.exception() or future.result()
                if not isinstance(outcome, BaseException):
                    bar.update(len(outcome))
            while consumed in finished:
                outcome = finished.pop(consumed)
                if isinstance(outcome, BaseException):
                    raise outcome   # the first point that failed, whichever finished first
                for output in outcome:
                    consume(output)
                consumed += 1
