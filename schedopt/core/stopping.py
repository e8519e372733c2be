"""Stopping criteria: a wall-clock deadline shared by every stage of one ``solve`` call."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from .errors import SchedoptError


class DeadlineReached(SchedoptError):
    """The deadline passed in a phase that has nothing to return yet (building data or a model,
    keeping earlier guarantees). Raised by :meth:`Deadline.check` inside a method;
    ``schedopt.solve`` turns it into an honest ``NO_SOLUTION`` (or the caller's hint), so it
    never reaches the caller."""

    def __init__(self, phase: str, message: str | None = None):
        self.phase = phase
        super().__init__(message or f"the time limit was reached while {phase}")


#: The most a busy machine is assumed to slow a reserve down (``Deadline.stretch_s``): a
#: 2-core machine at load 4-6. Beyond it (measured 8× and more at load 12 under ``nice``)
#: a reserve that large leaves no time to find the first answer at all (fair share's 4,096
#: GPUs at 3 s: NO_SOLUTION from auto), so the limit is then kept only as far as the
#: validation of the answer allows.
MAX_SLOWDOWN = 3.0
#: The slowdown the problems' reserves were measured at: beside other work (admission's
#: validation 2.0 µs a job-slot there against 1.2 µs quiet, fair share's 65 µs a job). A
#: reserve stretches only beyond it.
CALIBRATED_SLOWDOWN = 1.5
#: Wall seconds after which the process's CPU share is a measurement (before: no stretch).
MIN_MEASURED_S = 0.1
#: A deadline's slowdown is measured at most this often (reading the thread's times costs
#: 5-15 µs, and ``auto`` at 3,200 admission jobs asks 10,000 times in 5 s).
RESAMPLE_S = 0.02


def thread_cpu_times() -> tuple[int, float, float] | None:
    """(thread id, seconds on a CPU, seconds runnable but waiting for one) of the calling
    thread since it started, from Linux's ``/proc/thread-self/schedstat``; None elsewhere."""
    try:
        with open("/proc/thread-self/schedstat", "rb") as f:
            on_cpu_ns, waiting_ns = f.read().split()[:2]
        return threading.get_native_id(), int(on_cpu_ns) / 1e9, int(waiting_ns) / 1e9
    except (OSError, ValueError):
        return None


def slowdown(since_wall: float, since_cpu: float, *since_thread: float) -> float:
    """How much slower than alone this process runs, since (``time.perf_counter()``,
    ``time.process_time()``, and :func:`thread_cpu_times` when there were any) = (since_wall,
    since_cpu, *since_thread), between 1 and MAX_SLOWDOWN. Beside other work on a 2-core
    machine a Python loop gets a fraction of a core, and everything measured quiet
    (validation's reserve) takes that many times longer.

    Where the thread's times are read (Linux): its time on a CPU and waiting for one, over its
    time on a CPU. The time it is blocked (waiting on worker processes, on a pipe, on I/O)
    counts as neither, so waiting on workers does not read as a busy machine. Elsewhere: wall
    time over the process's CPU time, which grows while it waits (#17: up to one extra
    reserve, ending phases early)."""
    wall = time.perf_counter() - since_wall
    if wall < MIN_MEASURED_S:
        return 1.0
    now = thread_cpu_times() if since_thread else None
    if now is not None and now[0] == since_thread[0]:
        on_cpu, waiting = now[1] - since_thread[1], now[2] - since_thread[2]
        if on_cpu + waiting < MIN_MEASURED_S:  # blocked nearly all the time: nothing measured
            return 1.0
        return min(MAX_SLOWDOWN, max(1.0, (on_cpu + waiting) / max(on_cpu, 1e-9)))
    return wall_per_cpu(since_wall, since_cpu)


def wall_per_cpu(since_wall: float, since_cpu: float) -> float:
    """Wall seconds per CPU second of this process since (``time.perf_counter()``,
    ``time.process_time()``) = (since_wall, since_cpu), between 1 and MAX_SLOWDOWN (1 before
    MIN_MEASURED_S of wall): how many times its CPU seconds a step of this process's CPU now
    takes on the wall clock."""
    wall = time.perf_counter() - since_wall
    if wall < MIN_MEASURED_S:
        return 1.0
    cpu = time.process_time() - since_cpu
    return min(MAX_SLOWDOWN, max(1.0, wall / max(cpu, 1e-9)))


def cpu_share_slowdown(cpu_s: float = 0.03, cap: float = MAX_SLOWDOWN) -> float:
    """How much slower than alone this process runs now, measured: wall time over CPU time of
    a busy loop that uses ``cpu_s`` of CPU (30 ms: 90 ms of wall at 3×), between 1 and ``cap``
    (MAX_SLOWDOWN, the reserves' cap; a gate that refuses work rather than reserving time for
    it wants the measure itself: ``math.inf``). (The process's start-up said nothing: 0.1-0.3 s
    before ``main``, read as 2.4-3× at load 4, where a 39 MB file then loaded in 4.1 s, as
    quiet.)"""
    wall0, cpu0 = time.perf_counter(), time.process_time()
    acc = 0
    while time.process_time() - cpu0 < cpu_s:
        for i in range(10_000):
            acc = (acc * 31 + i) % 1_000_003
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return min(cap, max(1.0, wall / max(cpu, 1e-9)))


@dataclass(frozen=True)
class Deadline:
    """An absolute point in ``time.perf_counter()`` time by which a solve must return.

    ``stretch_s`` is time kept back for a later phase (validating the answer), measured at
    CALIBRATED_SLOWDOWN: the deadline moves earlier by ``stretch_s × (s / CALIBRATED_SLOWDOWN
    − 1)`` more when the slowdown ``s`` this process measures since ``since`` (wall and CPU
    clocks, and the thread's times on and waiting for a CPU where Linux gives them:
    :func:`slowdown`) is larger. Fair share's validation of 20,000 jobs, 1.4 s reserved, took
    4-8 s at load 8-11 (#16)."""

    end: float
    stretch_s: float = 0.0
    since: tuple[float, ...] = (0.0, 0.0)
    #: (when, stretch factor) last measured, shared with the deadlines made by ``earlier``.
    measured: list[float] = field(default_factory=lambda: [-1e300, 1.0], compare=False, repr=False)

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.perf_counter() + seconds)

    def _end(self) -> float:
        if not self.stretch_s:
            return self.end
        return self.end - self.stretch_s * max(0.0, self.stretch_factor() - 1.0)

    def stretch_factor(self) -> float:
        """How many times ``stretch_s`` the reserve is now (at least 1; measured again after
        RESAMPLE_S)."""
        now = time.perf_counter()
        if now - self.measured[0] >= RESAMPLE_S:
            self.measured[:] = [now, max(1.0, slowdown(*self.since) / CALIBRATED_SLOWDOWN)]
        return self.measured[1]

    def remaining(self) -> float:
        return max(0.0, self._end() - time.perf_counter())

    def expired(self) -> bool:
        return self.remaining() <= 0.0

    def check(self, phase: str) -> None:
        """Raise :class:`DeadlineReached` naming ``phase`` if the deadline has passed. Cheap
        (two clock reads): loops over jobs call it every few hundred items."""
        if time.perf_counter() >= self._end():
            raise DeadlineReached(phase)

    def earlier(self, seconds: float) -> Deadline:
        """This deadline moved ``seconds`` earlier (time kept back for a later phase)."""
        return Deadline(self.end - max(0.0, seconds), self.stretch_s, self.since, self.measured)

    def reserving(self, seconds: float) -> Deadline:
        """This deadline moved ``seconds`` earlier on a quiet machine, and ``seconds`` times
        the measured slowdown earlier on a busy one (``stretch_s``)."""
        thread = thread_cpu_times()
        now = (time.perf_counter(), time.process_time(), *(thread or ()))
        return Deadline(self.end - max(0.0, seconds), self.stretch_s + max(0.0, seconds), now)

    def share(self, fraction: float, reserve_s: float = 0.0) -> float:
        """Seconds for one stage: ``fraction`` of what remains after keeping ``reserve_s``."""
        return max(0.0, (self.remaining() - reserve_s) * fraction)

    def cpu_share(self, fraction: float, cpu_s: float, most: float) -> CpuShare:
        """A deadline for one stage that needs ``cpu_s`` of this process's CPU time: it ends
        once the stage has had that much (``time.process_time()`` from now), but not before
        ``fraction`` of the time left has passed (the stage's share of the wall, as
        ``earlier(share(1 - fraction))``) and never after ``most`` of it (the wall deadline
        always wins: what follows keeps ``1 - most`` of the time left). On a quiet machine
        the wall share ends later; beside other work, where the process gets a fraction of a
        core, the stage gets the CPU it needs before the next one takes its share (#17)."""
        now, left = time.perf_counter(), self.remaining()
        return CpuShare(
            self.end - max(0.0, left * (1.0 - most)),
            self.stretch_s,
            self.since,
            self.measured,
            soft=now + max(0.0, left * min(fraction, most)),
            cpu_s=cpu_s,
            cpu0=time.process_time(),
            wall0=now,
        )


@dataclass(frozen=True)
class CpuShare(Deadline):
    """A stage's deadline counted in the process's CPU time (:meth:`Deadline.cpu_share`): it
    ends once ``cpu_s`` CPU seconds have passed since ``cpu0`` (``time.process_time()``),
    not before the wall time ``soft``, and never after ``end`` (its wall cap). Until then
    ``remaining`` is the wall time the CPU left takes at the rate the stage has had it so far
    (wall over CPU since ``wall0``, at least 1), so a share of it inside the stage (a pricing
    round's) is a share of what the stage will get."""

    soft: float = 0.0
    cpu_s: float = 0.0
    cpu0: float = 0.0
    wall0: float = 0.0

    def _end(self) -> float:
        cap = super()._end()
        used = time.process_time() - self.cpu0
        if used >= self.cpu_s:
            return min(cap, self.soft)
        now = time.perf_counter()
        wall = now - self.wall0
        per_cpu = max(1.0, wall / max(used, 1e-9)) if wall >= MIN_MEASURED_S else 1.0
        return min(cap, max(self.soft, now + (self.cpu_s - used) * per_cpu))

    def earlier(self, seconds: float) -> Deadline:
        """A plain deadline ``seconds`` before this one's end as it stands now."""
        return Deadline(self._end() - max(0.0, seconds))


class Ticker:
    """Checks ``deadline`` every ``every`` calls, for loops that build data or a model: the
    check is one clock read, so a loop over 100,000 jobs stops within a few hundred of them."""

    __slots__ = ("_count", "_deadline", "_every", "_phase")

    def __init__(self, deadline: Deadline | None, phase: str, every: int = 256):
        self._deadline, self._phase, self._every, self._count = deadline, phase, every, 0

    def __call__(self) -> None:
        self._count += 1
        if self._deadline is not None and self._count % self._every == 0:
            self._deadline.check(self._phase)


def too_slow_to_build(
    num_variables: int, s_per_variable: float, seconds: float, factor: float = 1.0
) -> str | None:
    """Why an exact model of ``num_variables`` variables, each about ``s_per_variable`` (times
    ``factor``) to build, would not be built in ``seconds`` (None: it would): a problem's
    ``too_big_for``, asked before building."""
    estimate = num_variables * s_per_variable * factor
    if estimate < seconds:
        return None
    return (
        f"not enough time to build the exact model ({num_variables:,} variables, "
        f"about {estimate:.1f} s to build; {seconds:.1f} s left)"
    )


def runaway_cap_s(time_limit_s: float) -> float:
    """The wall-clock cap of a deterministic run (SolveOptions.deterministic): 10 × the limit
    + 10 s, well beyond what the run's fixed work takes on a machine 20 × slower."""
    return 10 * time_limit_s + 10


#: Branch-and-bound nodes a MIP level may explore per second of its share of the limit in
#: deterministic mode (a budget of work, not a measure of time: a node of a large model takes
#: far longer than one of a small model), at least DETERMINISTIC_MIN_NODES. HiGHS's
#: ``mip_max_nodes`` and CBC's ``-maxNodes`` both take it (SolveOptions.deterministic).
DETERMINISTIC_NODES_PER_S = 100
DETERMINISTIC_MIN_NODES = 50


def deterministic_nodes(seconds: float) -> int:
    """The node budget of a MIP level given ``seconds`` of the limit in deterministic mode."""
    return max(DETERMINISTIC_MIN_NODES, int(DETERMINISTIC_NODES_PER_S * seconds))


def level_limits(time_limit_s: float, deterministic: bool) -> tuple[int | None, float]:
    """(node budget, wall-clock limit) of a MIP level given ``time_limit_s``: in deterministic
    mode (SolveOptions.deterministic) :func:`deterministic_nodes` and :func:`runaway_cap_s`
    (the level stops on its budget of work; the wall clock only caps a runaway run), else no
    node budget and the limit itself. HiGHS's and CBC's sessions both take them."""
    if not deterministic:
        return None, time_limit_s
    return deterministic_nodes(time_limit_s), runaway_cap_s(time_limit_s)
