"""What every benchmark shares: GPU synchronisation, a fixed number of timed samples (median and
spread), peak memory, provenance columns and CSVs written one row at a time (a run cut short keeps
what it measured)."""

from __future__ import annotations

import contextlib
import csv
import math
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import torch

from ..provenance import PACKAGES, environment

MIB = 2**20
# the keys of softlookup.provenance.environment(), first on every benchmark row
PROVENANCE_COLUMNS = [
    "device",
    "device_name",
    "host",
    "threads",
    "python",
    *PACKAGES,
    "commit",
    "dirty",
]


def provenance(device: torch.device) -> dict[str, object]:
    """softlookup.provenance.environment(device): the values of PROVENANCE_COLUMNS."""
    env = environment(device)
    if set(env) != set(PROVENANCE_COLUMNS):
        raise RuntimeError(f"environment() keys {sorted(env)} != {sorted(PROVENANCE_COLUMNS)}")
    return env


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# untimed calls before the samples: the first compiles and autotunes, the next ones reach steady
# clocks and caches; on CPU nothing is compiled or tuned after the first call
WARMUP_CALLS = {"cuda": 3, "cpu": 1}
# zeroed before every CUDA sample, so that each starts with a cold L2 (as triton.testing.do_bench)
L2_FLUSH_BYTES = 256 * MIB
QUANTILES = (20, 50, 80)


def time_samples(fn: Callable[[], object], device: torch.device, samples: int) -> dict[str, float]:
    """fn timed `samples` times after WARMUP_CALLS untimed calls: a sample count, never a time
    budget, so a slow row gets as many samples as a fast one. CUDA: one pair of events around
    each call; CPU: wall time. Returns the columns time_ms (median), time_p20_ms, time_p80_ms
    (the spread) and samples."""
    for _ in range(WARMUP_CALLS[device.type]):
        fn()
    if device.type == "cuda":
        flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device=device)
        events = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(samples)
        ]
        synchronize(device)
        for start, end in events:
            flush.zero_()
            start.record()
            fn()
            end.record()
        synchronize(device)
        times = [start.elapsed_time(end) for start, end in events]
    else:
        times = []
        for _ in range(samples):
            began = time.perf_counter()
            fn()
            times.append((time.perf_counter() - began) * 1e3)
    p20, median, p80 = np.percentile(times, QUANTILES)
    return {
        "time_ms": float(median),
        "time_p20_ms": float(p20),
        "time_p80_ms": float(p80),
        "samples": len(times),
    }


def cuda_graph(fn: Callable[[], object], device: torch.device) -> Callable[[], None]:
    """fn captured once into a CUDA graph (after one call on a side stream: compiles, autotuning,
    allocations); calling the result replays every kernel fn launched, without launching them."""
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream(device).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def peak_mib(fn: Callable[[], object], device: torch.device) -> float:
    """Peak CUDA memory fn allocates above what was allocated before; NaN on CPU."""
    if device.type != "cuda":
        return math.nan
    synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    before = torch.cuda.memory_allocated(device)
    fn()
    synchronize(device)
    return (torch.cuda.max_memory_allocated(device) - before) / MIB


@contextlib.contextmanager
def csv_rows(path: Path, columns: list[str]) -> Iterator[Callable[[dict], None]]:
    """A function writing one row at a time, flushed, so a run cut short keeps what it measured."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, restval="")
        writer.writeheader()

        def write(row: dict) -> None:
            writer.writerow(row)
            f.flush()

        yield write
