"""Where a result came from: package versions, device, host, git commit, config hash.

One function, `environment()`, used by every stage that records provenance (training meta.json,
benchmark CSV rows, the claims ledger, the paper's reproducibility appendix).
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from functools import cache
from importlib import metadata
from pathlib import Path

import torch

from .paths import ROOT

PACKAGES = ("torch", "triton", "sacrebleu", "sentencepiece", "snakemake")


def cpu_name() -> str:
    """The CPU's model name, family and model from /proc/cpuinfo (Linux; else what platform
    knows), and the vector kernels torch dispatches to on it. Two CPUs of one name can differ in
    family or in the kernels torch picks, and then CPU training is not bit-identical between
    them (measured: one run's validation loss differs in its 7th digit, and later digits grow)."""
    kernels = f"{torch.backends.cpu.get_cpu_capability()} kernels"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        fields = {}
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
        if "model name" in fields:
            return (
                f"{fields['model name']} (family {fields.get('cpu family', '?')} model "
                f"{fields.get('model', '?')}, {kernels})"
            )
    return f"{platform.processor() or platform.machine()} ({kernels})"


def package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


@cache
def git_state() -> tuple[str, bool]:
    """(commit, dirty) of the checkout this code runs from; ("unknown", False) outside git."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()

    try:
        return git("rev-parse", "HEAD"), bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return "unknown", False


def config_hash(config: object) -> str:
    """A short, order-independent hash of a JSON-able config (sha256 of its canonical JSON)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def environment(device: torch.device | str | None = None) -> dict[str, object]:
    """Versions, device and code state behind a result; `device` defaults to CUDA when visible."""
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(device)
    commit, dirty = git_state()
    return {
        "python": platform.python_version(),
        **{name: package_version(name) for name in PACKAGES},
        "device": device.type,
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else cpu_name(),
        "host": platform.node(),
        "threads": torch.get_num_threads(),
        "commit": commit,
        "dirty": dirty,
    }
