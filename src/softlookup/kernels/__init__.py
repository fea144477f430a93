"""Attention kernels: the one `attention()` entry (api.py) and its backends.

api.py        attention(): argument checks, backend dispatch
reference.py  materialised scores (readable; returns the weights when asked)
masks.py      causal (aligned to the end) and key-padding masks as one bool mask
torch_sdpa.py torch.nn.functional.scaled_dot_product_attention
triton/       our fused kernels: kernels (device code), tiles (launch configs, autotuning),
              flash (launches + autograd), decode (split-K decoding with a KV cache)
"""

from .api import BACKENDS, attention, triton_attention
from .reference import reference_attention
from .torch_sdpa import torch_attention

__all__ = ["BACKENDS", "attention", "reference_attention", "torch_attention", "triton_attention"]
