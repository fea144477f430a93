"""Test-session settings that must hold before any test module imports Triton, and before any
test starts a process."""

import os

import torch

from softlookup.data.sources import export_mirror

# Without CUDA, the Triton kernels run under Triton's CPU interpreter. Triton fixes
# interpreter-or-compiler when a kernel is first defined, so this is set for the whole session,
# before any module (the kernels, the benchmarks, the models) imports them.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")


def pytest_configure(config):
    """A relative $SOFTLOOKUP_MIRROR (the README's ../shared/corpora) means the directory pytest
    was started in (`make test`'s: the checkout, where make has joined it already). Resolved
    once, here: every test, and every Snakemake a test starts in a temporary directory, gets the
    absolute path."""
    export_mirror(None, config.invocation_params.dir)
