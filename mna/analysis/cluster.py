"""Points on a Dask cluster (the ``dask`` extra): the client's ``concurrent.futures``
executor, so that `mna.analysis.parallel.gather` serves it as it serves a local pool, and a
worker plugin that puts the job on every worker once, workers that join later included."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager

from dask.utils import parse_timedelta
from distributed import Client, LocalCluster, WorkerPlugin
from distributed.comm import connect

from mna.analysis.parallel import install, uninstall
from mna.errors import SchedulerError

CONNECT_TIMEOUT = "10s"   # to reach a scheduler given by its address


class _Install(WorkerPlugin):
    """Holds the job; each worker keeps it under its token when the plugin is set up."""

    def __init__(self, token: str, job):
        self.token = token
        self.job = job

    def setup(self, worker) -> None:
        install(self.token, self.job)

    def teardown(self, worker) -> None:
        uninstall(self.token)


async def _greeted(address: str) -> None:
    """Connect to `address` and exchange Dask's greeting within the timeout: a server that
    accepts the connection but never answers (a web server) would hold ``Client`` for
    good, as its handshake waits without a limit."""
    timeout = parse_timedelta(CONNECT_TIMEOUT)
    try:
        comm = await asyncio.wait_for(connect(address, timeout=timeout), timeout)
    except asyncio.TimeoutError:
        raise OSError(f"no Dask greeting within {CONNECT_TIMEOUT}") from None
    await comm.close()


@contextmanager
def dask_executor(token: str, job, scheduler, workers: int) -> Iterator[tuple[object, int]]:
    """The executor of `scheduler` (a ``Client``, its address, or ``"local"`` for a
    ``LocalCluster`` of `workers` single-threaded processes, closed on exit) with `job` on
    every worker, and the number of threads the cluster runs tasks on."""
    with ExitStack() as stack:
        if isinstance(scheduler, Client):
            client = scheduler
        elif scheduler == "local":
            cluster = stack.enter_context(LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True,
                dashboard_address=None))
            client = stack.enter_context(Client(cluster))
        else:
            try:
                with ThreadPoolExecutor(1) as greeter:   # its own loop: the caller's may run
                    greeter.submit(asyncio.run, _greeted(scheduler)).result()
                client = stack.enter_context(Client(scheduler, timeout=CONNECT_TIMEOUT))
            # a ValueError or MemoryError: what answered there speaks no Dask
            except (OSError, ValueError, MemoryError) as error:
                raise SchedulerError(f"cannot reach the Dask scheduler at {scheduler}: "
                                     f"{error or type(error).__name__}") from None
        name = f"mna-{token}"
        client.register_plugin(_Install(token, job), name=name)
        stack.callback(client.unregister_worker_plugin, name)
        yield client.get_executor(pure=False), max(1, sum(client.nthreads().values()))
