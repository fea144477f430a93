"""Test-session settings that must hold before any test module imports Triton."""

import os

import torch

# Without CUDA, the Triton kernels run under Triton's CPU interpreter. Triton fixes
# interpreter-or-compiler when a kernel is first defined, so this is set for the whole session,
# before any module (the kernels, the benchmarks, the models) imports them.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
