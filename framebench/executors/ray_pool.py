"""``--executor ray``: units over a pool of Ray worker actors, results streamed back as they finish.

Each actor builds the recipe's worker once (the loaded model, the planner) and runs units as Ray
streaming generators (``num_returns="streaming"``): every chunk a worker yields (a backend call's
batch, an episode) reaches the driver through Ray's object store while the unit goes on, and the
driver stores it at once. Nothing is written on the worker's node. When a worker dies (killed, out
of memory, its node lost) the driver kills the actor, asks the run for what is left of the unit
after the chunks it stored (``remaining``) and gives that to a fresh worker, so finished work is
never redone. A unit fails the run after ``MAX_ATTEMPTS`` worker deaths, or at once when it raises
(a user error, a bug).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from framebench.errors import UserError
from framebench.executors.base import Chunk, Recipe, Stats, Unit, WorkerMeta, timed
from framebench.executors.cluster import ray_session
from framebench.executors.resources import count_workers, worker_options

MAX_ATTEMPTS = 4
START_GRACE_S = 60  # how long the first units wait for every new worker to be placed


class ActorWorker:
    """The Ray actor around one recipe worker (built on first use, then kept)."""

    def __init__(self, build: Callable[..., Any], args: tuple[Any, ...]):
        self.build, self.args = build, args
        self.worker: Any = None
        self._meta: WorkerMeta | None = None

    def _ensure(self) -> float:
        if self.worker is not None:
            return 0.0
        t0 = time.perf_counter()
        self.worker = self.build(*self.args)
        self._meta = self.worker.meta()
        return time.perf_counter() - t0

    def meta(self) -> WorkerMeta:
        self._ensure()
        assert self._meta is not None
        return self._meta

    def run(self, unit: Unit) -> Iterator[Chunk]:
        import ray

        setup, node = self._ensure(), ray.get_runtime_context().get_node_id()
        for chunk in timed(self.worker.run(unit), setup):
            chunk.node = node
            yield chunk


def _cause(exc: BaseException) -> BaseException:
    return getattr(exc, "cause", None) or exc


class RayExecutor:
    """Units on Ray actors (``address``: a cluster, or None for a local instance of ``workers`` CPUs)."""

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None, *,
                 gpus_per_worker: float | None = None, local_resources: dict[str, float] | None = None,
                 max_attempts: int = MAX_ATTEMPTS):
        self.address, self.requested, self.gpus_per_worker = address, workers, gpus_per_worker
        self.local_resources, self.max_attempts = local_resources, max_attempts
        self.stats, self.n_workers, self.idle = Stats(), 0, []
        self._session: Any = None
        self.ray: Any = None

    # ---- lifecycle
    def start(self, recipe: Recipe) -> WorkerMeta:
        self._session = ray_session(self.address, num_cpus=self.requested, resources=self.local_resources)
        self.ray = self._session.__enter__()
        try:
            return self._start(recipe)
        except BaseException:
            self.close()
            raise

    def _start(self, recipe: Recipe) -> dict[str, Any]:
        cluster = self.ray.cluster_resources()
        for name in recipe.resources:
            if not cluster.get(name):
                raise UserError(f"no Ray node offers the {name!r} resource: start its hosts with "
                                f"ray start --resources '{{\"{name}\": 1}}' (docker/ray/README.md)")
        options = worker_options(recipe.device, cluster, self.gpus_per_worker, recipe.resources)
        if recipe.env:
            options["runtime_env"] = {"env_vars": dict(recipe.env)}
        self.n_workers = count_workers(options, cluster, self.requested)
        self.options, self.recipe = options, recipe
        self.actor_cls = self.ray.remote(**options)(ActorWorker)
        reason = ""
        for _ in range(self.max_attempts):
            first = self._spawn()
            try:
                meta = self._get(first.meta.remote())
            except _Lost as exc:
                self.stats.worker_deaths += 1
                self._kill(first)
                reason = str(exc)
                continue
            self.idle = [first]
            return meta
        raise RuntimeError(f"the first Ray worker died {self.max_attempts} times while loading "
                           f"{recipe.label}: {reason}")

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "address": self.address or "local", "workers": self.n_workers,
                "resources": {k: v for k, v in getattr(self, "options", {}).items()
                              if k in ("num_cpus", "num_gpus", "resources")},
                **self.stats.as_dict()}

    def close(self) -> None:
        for worker in self.idle:
            self._kill(worker)
        self.idle = []
        if self._session is not None:
            session, self._session = self._session, None
            session.__exit__(None, None, None)

    # ---- the pool
    def _spawn(self) -> Any:
        return self.actor_cls.remote(self.recipe.build, self.recipe.args)

    def _kill(self, worker: Any) -> None:
        try:
            self.ray.kill(worker, no_restart=True)
        except Exception:  # already gone
            pass

    def _get(self, ref: Any) -> Any:
        """``ray.get``; a dead worker is :class:`_Lost`, a user error in the unit one line."""
        from ray.exceptions import (
            ActorDiedError,
            ActorUnavailableError,
            NodeDiedError,
            ObjectLostError,
            OwnerDiedError,
            RayActorError,
            RayTaskError,
            WorkerCrashedError,
        )

        try:
            return self.ray.get(ref)
        except (RayActorError, ActorDiedError, ActorUnavailableError, WorkerCrashedError, NodeDiedError,
                ObjectLostError, OwnerDiedError) as exc:
            raise _Lost(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
        except RayTaskError as exc:
            cause = _cause(exc)
            if isinstance(cause, UserError):
                raise UserError(str(cause)) from None
            raise

    def execute(self, units: Sequence[Unit],
                remaining: Callable[[Unit], Unit | None] | None = None) -> Iterator[Chunk]:
        """Units go only to workers known to be up; a new worker (at the start, or replacing a
        dead one) joins the idle ones once Ray has placed it, so a replacement the cluster cannot
        place (its node is gone) never holds a unit."""
        t0 = time.perf_counter()
        queue = deque(units)
        attempts: dict[int, int] = {}
        starting: dict[Any, Any] = {}  # ready-ref -> worker not yet placed
        running: dict[Any, list[Any]] = {}  # generator -> [worker, unit, records reported]

        def spawn() -> None:
            worker = self._spawn()
            starting[worker.__ray_ready__.remote()] = worker

        while len(self.idle) + len(starting) < min(self.n_workers, len(queue)):
            spawn()
        try:
            if starting:  # let the first round of units spread over every worker the run started
                up, _ = self.ray.wait(list(starting), num_returns=len(starting), timeout=START_GRACE_S)
                for ref in up:
                    self._started(ref, starting)
            while queue or running:
                while self.idle and queue:
                    worker, unit = self.idle.pop(), queue.popleft()
                    attempts[unit.index] = attempts.get(unit.index, 0) + 1
                    running[worker.run.options(num_returns="streaming").remote(unit)] = [worker, unit, 0]
                if not running and not starting:
                    raise RuntimeError("no Ray worker is left to run the remaining units")
                ready, _ = self.ray.wait([*running, *starting], num_returns=1)
                if ready[0] in starting:
                    self._started(ready[0], starting)
                    continue
                chunk = self._next(ready[0], running, queue, attempts, remaining, spawn)
                if chunk is not None:
                    yield chunk
        finally:
            self.stats.seconds += time.perf_counter() - t0
            for worker, _, _ in running.values():
                self._kill(worker)
            for worker in starting.values():
                self._kill(worker)

    def _started(self, ref: Any, starting: dict[Any, Any]) -> None:
        """A new worker is placed (idle now) or died starting."""
        worker = starting.pop(ref)
        try:
            self._get(ref)
            self.idle.append(worker)
        except _Lost:
            self.stats.worker_deaths += 1
            self._kill(worker)

    def _next(self, gen: Any, running: dict[Any, list[Any]], queue: deque, attempts: dict[int, int],
              remaining: Callable[[Unit], Unit | None] | None, spawn: Callable[[], None]) -> Chunk | None:
        """The generator's next chunk; None when its unit ended (worker idle again) or its worker
        died (the unit's unstored rest queued again, a replacement started)."""
        worker, unit, reported = running[gen]
        try:
            chunk = self._get(next(gen))
        except StopIteration:
            del running[gen]
            if reported != unit.size:
                raise RuntimeError(f"unit {unit.index}: its worker reported {reported} of {unit.size} records") from None
            self.idle.append(worker)
            self.stats.units += 1
            return None
        except _Lost:
            del running[gen]
            self.stats.worker_deaths += 1
            self._kill(worker)
            spawn()
            rest = remaining(unit) if remaining is not None else unit
            if rest is None:
                self.stats.units += 1
                return None
            if attempts[unit.index] >= self.max_attempts:
                raise RuntimeError(f"unit {unit.index}: its worker died {attempts[unit.index]} times; "
                                   "giving up") from None
            self.stats.retried_units += 1
            queue.appendleft(rest)
            return None
        running[gen][2] += chunk.done
        self.stats.add(chunk)
        return chunk


class _Lost(Exception):
    """A worker (or the node it ran on) is gone; its unit's unstored rest is retried."""
