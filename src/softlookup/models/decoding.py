"""Greedy and beam search, batched over sentences, for any model that decodes step by step.

A model supplies a decoder state and a step function:
    step(tokens (N,), state) -> (log_probs (N,V), state)
The state is a nest of dicts, lists and tuples whose tensors all have the N rows (one per sentence,
or per beam) first; ints and None pass through. Beam search reorders beams by selecting rows, so it
works unchanged for the GRU's hidden state and for the Transformer's KV cache.

Conventions: generation runs at most `max_len` steps, and EOS counts as a step, so a hypothesis of
`max_len` tokens never finished. Hypotheses come back without BOS/EOS. PAD and BOS are never
emitted (their log-probabilities are set to -inf, the others are left as they are).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .special_tokens import BOS, EOS, PAD

StepFn = Callable[[torch.Tensor, object], tuple[torch.Tensor, object]]


def select_rows(state: object, index: torch.Tensor) -> object:
    """The same nest with every tensor's rows picked by `index` (N',), i.e. tensor[index]."""
    if isinstance(state, torch.Tensor):
        return state.index_select(0, index)
    if isinstance(state, dict):
        return {key: select_rows(value, index) for key, value in state.items()}
    if isinstance(state, (list, tuple)):
        return type(state)(select_rows(value, index) for value in state)
    return state


def length_penalty(length: torch.Tensor, alpha: float) -> torch.Tensor:
    """GNMT (Wu et al. 2016): ((5 + |Y|) / 6) ** alpha; alpha = 0 ranks by raw log-probability."""
    return ((5.0 + length.float()) / 6.0) ** alpha


def greedy_search(
    step: StepFn, state: object, batch_size: int, device: torch.device, max_len: int
) -> tuple[list[list[int]], torch.Tensor]:
    """Pick the most probable token each step -> (hypotheses, summed log-probabilities (B,))."""
    tokens = torch.full((batch_size,), BOS, dtype=torch.long, device=device)
    finished = torch.zeros(batch_size, dtype=torch.bool, device=device)
    score = torch.zeros(batch_size, device=device)
    outputs = []
    for _ in range(max_len):
        log_probs, state = step(tokens, state)
        log_probs = _forbid_specials(log_probs)  # (B,V)
        best, tokens = log_probs.max(dim=-1)  # (B,), (B,)
        score += best.masked_fill(finished, 0.0)
        tokens = tokens.masked_fill(finished, PAD)
        outputs.append(tokens)
        finished |= tokens == EOS
        if finished.all():
            break
    return _strip(torch.stack(outputs, dim=1)), score


def beam_search(
    step: StepFn,
    state: object,
    batch_size: int,
    device: torch.device,
    max_len: int,
    beam_size: int,
    alpha: float,
) -> tuple[list[list[int]], torch.Tensor]:
    """Keep the `beam_size` best prefixes per sentence, ranked by log-prob / length_penalty.

    A beam that emitted EOS stays in its slot with a frozen score (its only continuation is PAD at
    no cost) and competes with the live beams on its length-penalised score; a sentence is done when
    all its beams are. With beam_size = 1 this is exactly greedy search.
    Returns (best hypothesis per sentence, its length-penalised score (B,)).
    """
    B, K = batch_size, beam_size
    state = select_rows(state, torch.arange(B, device=device).repeat_interleave(K))  # N = B*K rows
    tokens = torch.full((B * K,), BOS, dtype=torch.long, device=device)
    beam_logp = torch.full((B, K), float("-inf"), device=device)
    beam_logp[:, 0] = 0.0  # the K beams start identical: only the first may expand
    lengths = torch.zeros(B, K, dtype=torch.long, device=device)
    finished = torch.zeros(B, K, dtype=torch.bool, device=device)
    history = torch.zeros(B, K, 0, dtype=torch.long, device=device)
    rows = torch.arange(B, device=device)[:, None] * K  # (B,1) first row of each sentence
    for t in range(max_len):
        log_probs, state = step(tokens, state)
        log_probs = _forbid_specials(log_probs).view(B, K, -1)  # (B,K,V)
        vocab = log_probs.shape[-1]
        if K > vocab - 2:
            raise ValueError(f"beam_size={K} exceeds the {vocab - 2} emittable tokens")
        frozen = torch.full_like(log_probs[0, 0], float("-inf"))
        frozen[PAD] = 0.0  # (V,) a finished beam's only, free, continuation
        log_probs = torch.where(finished[..., None], frozen, log_probs)
        lengths = torch.where(finished, lengths, t + 1)  # (B,K) length of each beam's candidates
        cand_logp = beam_logp[..., None] + log_probs  # (B,K,V)
        cand_score = cand_logp / length_penalty(lengths, alpha)[..., None]
        top = cand_score.view(B, K * vocab).topk(K, dim=1).indices  # (B,K) into K*V candidates
        origin, tokens = top // vocab, top % vocab  # (B,K) parent beam, new token
        beam_logp = cand_logp.view(B, K * vocab).gather(1, top)
        lengths = lengths.gather(1, origin)
        finished = finished.gather(1, origin) | (tokens == EOS)
        history = torch.cat(
            [history.gather(1, origin[..., None].expand_as(history)), tokens[..., None]], dim=2
        )  # (B,K,t+1)
        state = select_rows(state, (rows + origin).view(-1))
        tokens = tokens.view(-1)
        if finished.all():
            break
    final = beam_logp / length_penalty(lengths, alpha)  # (B,K)
    score, best = final.max(dim=1)
    return _strip(history[torch.arange(B, device=device), best]), score


def search(
    step: StepFn,
    state: object,
    batch_size: int,
    device: torch.device,
    *,
    max_len: int,
    beam_size: int = 1,
    length_penalty: float = 1.0,
) -> list[list[int]]:
    """Greedy search for beam_size 1, beam search above; returns token ids without BOS/EOS."""
    if max_len < 1 or beam_size < 1:
        raise ValueError(f"need max_len >= 1 and beam_size >= 1, got {max_len} and {beam_size}")
    if beam_size == 1:
        return greedy_search(step, state, batch_size, device, max_len)[0]
    return beam_search(step, state, batch_size, device, max_len, beam_size, length_penalty)[0]


def _forbid_specials(log_probs: torch.Tensor) -> torch.Tensor:
    return log_probs.index_fill(
        -1, torch.tensor([PAD, BOS], device=log_probs.device), float("-inf")
    )


def _strip(tokens: torch.Tensor) -> list[list[int]]:
    """(B,T) generated ids -> per sentence, the ids before the first EOS."""
    hypotheses = []
    for row in tokens.tolist():
        hypotheses.append(row[: row.index(EOS)] if EOS in row else row)
    return hypotheses
