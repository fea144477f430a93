"""What every benchmark shares: GPU synchronisation, median timings, peak memory, provenance
columns and CSVs written one row at a time (a run cut short keeps what it measured)."""

from __future__ import annotations

import contextlib
import csv
import math
import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import torch

from ..provenance import PACKAGES, environment

MIB = 2**20
# the keys of softlookup.provenance.environment(), first on every benchmark row
PROVENANCE_COLUMNS = [
    "device", "device_name", "host", "threads", "python", *PACKAGES, "commit", "dirty",
]  # fmt: skip


def provenance(device: torch.device) -> dict[str, object]:
    """softlookup.provenance.environment(device): the values of PROVENANCE_COLUMNS."""
    env = environment(device)
    if set(env) != set(PROVENANCE_COLUMNS):
        raise RuntimeError(f"environment() keys {sorted(env)} != {sorted(PROVENANCE_COLUMNS)}")
    return env


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def median_ms(fn: Callable[[], object], device: torch.device, repeats: int) -> float:
    """Median wall time of fn in milliseconds (triton.testing.do_bench on CUDA)."""
    if device.type == "cuda":
        import triton.testing

        return triton.testing.do_bench(fn, warmup=10, rep=50, return_mode="median")
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


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
