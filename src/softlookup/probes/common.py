"""Shared plumbing for the probes: tidy rows, seeded generators, softmax through the attention
entry, list-valued CLI options (the command line itself: probes/cli.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from softlookup.kernels import reference_attention


class TidyRows:
    """Rows of one probe's CSV: probe, quantity, setting columns, value (one number each)."""

    def __init__(self, probe: str) -> None:
        self.probe = probe
        self.rows: list[dict[str, str | float]] = []

    def add(self, quantity: str, value: float | torch.Tensor, **settings: object) -> None:
        # settings are written as text so that "4" never comes back as "4.0"
        self.rows.append(
            {
                "probe": self.probe,
                "quantity": quantity,
                **{name: str(setting) for name, setting in settings.items()},
                "value": float(value),
            }
        )

    def add_params(self, **params: float) -> None:
        """The probe's own parameters (seed, sizes) as param_<name> rows, for the paper's text."""
        for name, value in params.items():
            self.add(f"param_{name}", value)

    def frame(self) -> pd.DataFrame:
        frame = pd.DataFrame(self.rows)
        settings = [c for c in frame.columns if c not in ("probe", "quantity", "value")]
        return frame[["probe", "quantity", *settings, "value"]]

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.frame().to_csv(path, index=False)


def generator(seed: int, *salt: int) -> torch.Generator:
    """An independent torch generator per (seed, salt...), so one setting's draw never depends on
    which other settings were measured before it."""
    state = np.random.SeedSequence([seed, *salt]).generate_state(1)[0]
    return torch.Generator().manual_seed(int(state))


def attend(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, **options: object
) -> tuple[torch.Tensor, torch.Tensor]:
    """Single-sequence, single-head reference attention with weights.

    q (Nq,d), k (Nk,d), v (Nk,dv) -> out (Nq,dv), weights (Nq,Nk). A `key_padding_mask` option
    is given as (Nk,) bool.
    """
    if options.get("key_padding_mask") is not None:
        options["key_padding_mask"] = options["key_padding_mask"][None]  # (1,Nk)
    out, weights = reference_attention(
        q[None, None], k[None, None], v[None, None], return_weights=True, **options
    )
    return out[0, 0], weights[0, 0]


def weights_from_scores(scores: torch.Tensor) -> torch.Tensor:
    """Softmax of each row of given scores (R,N) -> (R,N), through the reference attention.

    A unit query against one-number keys holding the scores, unscaled, reads back exactly
    softmax(scores): the same code path every model uses, fed scores that came from elsewhere
    (an additive score network, or scores printed in an essay).
    """
    n_rows, n_keys = scores.shape
    q = torch.ones(n_rows, 1, 1, 1, dtype=scores.dtype)  # (R,H=1,Nq=1,d=1)
    k = scores[:, None, :, None]  # (R,1,N,1)
    v = torch.zeros(n_rows, 1, n_keys, 1, dtype=scores.dtype)
    _, weights = reference_attention(q, k, v, scale=1.0, return_weights=True)
    return weights[:, 0, 0, :]


def row_entropy(weights: torch.Tensor) -> torch.Tensor:
    """Shannon entropy in nats of each row of (..., N) weights -> (...); 0 log 0 counts as 0."""
    return torch.special.entr(weights).sum(-1)


def _parse_list(text: str, cast: type, kind: str) -> list:
    try:
        return [cast(part) for part in text.split(",") if part.strip()]
    except ValueError as error:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated {kind}, got {text!r}"
        ) from error


def int_list(text: str) -> list[int]:
    """Parse "4,16,64" into [4, 16, 64] for list-valued CLI options."""
    return _parse_list(text, int, "integers")


def float_list(text: str) -> list[float]:
    """Parse "1,2.5" into [1.0, 2.5] for list-valued CLI options."""
    return _parse_list(text, float, "numbers")
