"""Attention weights of a trained translator, read as evidence (claims B5, D1).

The model reads the first N test sentences with the reference as decoder input (teacher forcing)
and returns its attention weights. Studied maps: the GRU's cross attention ("cross"); for the
Transformer every decoder layer's cross attention per head ("dec.1.cross.h3") and pooled over a
layer's heads ("dec.1.cross") and over all layers ("cross"), and the last decoder layer's
self-attention ("dec.1.self.h0", "dec.1.self").

Analysed rows: real (not padding) query rows that can see at least two keys; keys a row cannot
see (padding, or the future under the causal mask) are not counted. Per map:
  entropy_*            row entropy / log(keys the row can see): 1 = flat, 0 = one-hot; mean and
                       quantiles over rows
  max_weight_mean      the mean of each row's largest weight
  argmax_on_eos_share  rows whose largest weight is on the source end-of-sentence token (cross);
  argmax_on_bos_share  on the first target token, BOS (self-attention)
  argmax_on_top_key_share  rows whose largest weight is on the sentence's most-attended key
                       (largest column sum): the pull of one big key (B5)
  chance_share         what either share would be if each row's largest weight fell on a
                       visible key at random (mean of 1 / keys seen)
  row_entropy_nats_mean  row entropy in nats (saturation: 0 = one-hot), with max_weight_mean the
                       trained model's softmax saturation (claim D3)
  logit_grad_norm_mean the norm of dL/d(logits) per row, L the batch's summed cross-entropy: the
                       gradient reaching the attention logits (softmax inputs) through the
                       softmax (Transformer maps; the GRU's weights are not in its graph)
  rows_with_padding, padding_mass_mean, padding_key_share_mean
                       over rows with padding keys: the weight that lands on padding (0 with the
                       key padding mask; a model trained without it, `padding_mask: false`, may
                       put weight there) and the share of keys that are padding
  next_position_weight_mean, next_position_chance, rows_with_next_position
                       self-attention only, over rows whose next target position is a real token:
                       the weight on that position, which holds the very token the row is
                       trained to predict (teacher forcing): the direct measure of copying (D4);
                       0 under the causal mask, which hides it; and the chance share there
A run without attention, or one that diverged, has no maps: its CSV says so in one row and its
alignment CSV is empty, so the outputs exist for every run.

The example sentence's cross attention goes to alignment_<run>.csv in long format (layer, head,
query_pos, key_pos, query_token, key_token, weight); the report draws it. Nothing is drawn here.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
import torch
import torch.nn.functional as F

from ..data import bpe
from ..data.batching import Batch, encode, make_batches, read_split
from ..kernels.masks import allowed_keys
from ..models import BOS, EOS, PAD
from ..models.checkpoint import load_model
from ..rundir import read_run_config, run_status

CSV_COLUMNS = ["run", "map", "quantity", "value"]
ALIGNMENT_COLUMNS = [
    "run",
    "layer",
    "head",
    "query_pos",
    "key_pos",
    "query_token",
    "key_token",
    "weight",
]
QUANTILES = {
    "entropy_q05": 0.05,
    "entropy_q25": 0.25,
    "entropy_median": 0.5,
    "entropy_q75": 0.75,
    "entropy_q95": 0.95,
}
SINK_TOKEN = {"cross": "eos", "self": "bos"}  # the key each kind of map may sink its weight into

Measures = dict[str, torch.Tensor]


# --- which maps, and which keys each of their rows can see ----------------------------------------


def studied_maps(attention: dict[str, torch.Tensor], causal_self: bool, batch: Batch) -> dict:
    """The maps this analysis studies, each as (weights (B,H,Nq,Nk), visible (B,Nq,Nk), sink (B,),
    kind, key padding (B,Nk)), from a model's `return_attention` dict (empty without attention);
    the sink of a self-attention map is BOS, at position 0."""
    src_pad, tgt_pad = batch.src == PAD, batch.tgt_in == PAD  # (B,S), (B,T)
    cross_visible = visible_keys(tgt_pad, src_pad, causal=False)  # (B,T,S)
    eos = (~src_pad).sum(dim=1) - 1  # (B,) the source EOS closes every row of src
    if "cross" in attention:  # GRU: (B,T,S), one head
        return {"cross": (attention["cross"][:, None], cross_visible, eos, "cross", src_pad)}
    decoder_layers = sorted(
        {int(name.split(".")[1]) for name in attention if name.startswith("dec.")}
    )
    maps = {
        f"dec.{i}.cross": (attention[f"dec.{i}.cross"], cross_visible, eos, "cross", src_pad)
        for i in decoder_layers
    }
    if decoder_layers:
        last = f"dec.{decoder_layers[-1]}.self"
        self_visible = visible_keys(tgt_pad, tgt_pad, causal=causal_self)  # (B,T,T)
        maps[last] = (attention[last], self_visible, torch.zeros_like(eos), "self", tgt_pad)
    return maps


def visible_keys(query_pad: torch.Tensor, key_pad: torch.Tensor, *, causal: bool) -> torch.Tensor:
    """query_pad (B,Nq), key_pad (B,Nk) -> (B,Nq,Nk): True where a real query row sees a key, with
    the same masking the attention itself applies (kernels.masks.allowed_keys)."""
    allowed = allowed_keys(
        query_pad.shape[1],
        key_pad.shape[1],
        causal=causal,
        key_padding_mask=key_pad,
        device=key_pad.device,
    )  # (B,1,Nq,Nk)
    return allowed[:, 0] & ~query_pad[:, :, None]


# --- per-row measures -----------------------------------------------------------------------------


def row_measures(
    weights: torch.Tensor,
    visible: torch.Tensor,
    sink: torch.Tensor,
    key_pad: torch.Tensor,
    logit_grad: torch.Tensor | None = None,
) -> Measures:
    """weights (B,H,Nq,Nk), visible (B,Nq,Nk), sink (B,), key_pad (B,Nk), logit_grad (B,H,Nq,Nk)
    or None -> per measure (B,H,Nq), plus "analysed" (B,Nq): the real rows that see at least two
    keys (only those are meant)."""
    seen = visible[:, None].to(torch.float64)  # (B,1,Nq,Nk)
    padding = key_pad[:, None, None, :].to(torch.float64)  # (B,1,1,Nk)
    mass_on_padding = (weights.to(torch.float64) * padding).sum(-1)  # (B,H,Nq), before dropping
    w = weights.to(torch.float64) * seen  # weight on unseen keys (none, if masking works) dropped
    n_seen = seen.sum(-1)  # (B,1,Nq)
    analysed = n_seen[:, 0] >= 2  # (B,Nq)
    largest, argmax = w.max(dim=-1)  # (B,H,Nq)
    column_sums = (w * analysed[:, None, :, None]).sum(dim=2)  # (B,H,Nk) over analysed rows
    top_key = column_sums.argmax(dim=-1, keepdim=True)  # (B,H,1)
    return {
        "entropy": torch.special.entr(w).sum(-1) / torch.log(n_seen.clamp(min=2)),
        "max_weight": largest,
        "argmax_on_sink": (argmax == sink[:, None, None]).to(torch.float64),
        "argmax_on_top_key": (argmax == top_key).to(torch.float64),
        "chance": (1 / n_seen.clamp(min=1)).expand_as(largest),
        "entropy_nats": torch.special.entr(w).sum(-1),
        "padding_mass": mass_on_padding,
        "padding_key_share": (padding.sum(-1) / weights.shape[-1]).expand_as(largest),
        **(
            {}
            if logit_grad is None
            else {"logit_grad_norm": logit_grad.to(torch.float64).norm(dim=-1)}
        ),
        "analysed": analysed,
    }


def next_position_measures(
    weights: torch.Tensor, visible: torch.Tensor, key_pad: torch.Tensor
) -> Measures:
    """Self-attention weights (B,H,T,T), visible (B,T,T), key_pad (B,T) -> (B,H,T) each row's
    weight on the position after it, and 1 / keys seen; NaN where that position is padding or
    past the end."""
    following = torch.full(weights.shape[:-1], float("nan"), dtype=torch.float64)
    following[..., :-1] = torch.diagonal(weights.to(torch.float64), offset=1, dim1=-2, dim2=-1)
    real_next = torch.zeros_like(key_pad)
    real_next[:, :-1] = ~key_pad[:, 1:]
    chance = (1 / visible.sum(-1).clamp(min=1).to(torch.float64))[:, None].expand_as(following)
    absent = ~real_next[:, None, :]
    return {
        "next_weight": following.masked_fill(absent, float("nan")),
        "next_chance": chance.masked_fill(absent, float("nan")),
    }


def logit_gradients(logits: torch.Tensor, batch: Batch, maps: dict) -> dict[str, torch.Tensor]:
    """Map -> dL/d(attention logits) (B,H,Nq,Nk) for L the summed token cross-entropy of the
    batch (teacher forcing), from each map's weights P and their gradient G = dL/dP: the softmax's
    backward, P * (G - rowsum(P * G)). Maps whose weights are not part of the graph that made
    the logits (the GRU stacks its per-step weights into a copy) are left out."""
    loss = F.cross_entropy(
        logits.flatten(0, 1), batch.tgt_out.flatten(), ignore_index=PAD, reduction="sum"
    )
    names = [name for name, found in maps.items() if found[0].requires_grad]
    grads = torch.autograd.grad(loss, [maps[name][0] for name in names], allow_unused=True)
    result = {}
    for name, grad in zip(names, grads, strict=True):
        if grad is not None:
            p = maps[name][0].detach()
            result[name] = p * (grad - (p * grad).sum(-1, keepdim=True))
    return result


def collect_rows(model: torch.nn.Module, batches: list[Batch]) -> dict[str, tuple[Measures, str]]:
    """Map -> (measure -> (H,R) over the analysed rows of every batch, kind of map)."""
    causal_self = bool(getattr(model.config, "causal_mask", True))
    gathered: dict[str, tuple[dict[str, list[torch.Tensor]], str]] = {}
    for batch in batches:
        with torch.enable_grad():
            logits, attention = model(batch.src, batch.tgt_in, return_attention=True)
            maps = studied_maps(attention, causal_self, batch)
            grads = logit_gradients(logits, batch, maps) if maps else {}
        for name, (weights, visible, sink, kind, key_pad) in maps.items():
            measures = row_measures(weights.detach(), visible, sink, key_pad, grads.get(name))
            if kind == "self":
                measures.update(next_position_measures(weights.detach(), visible, key_pad))
            analysed = measures.pop("analysed")  # (B,Nq)
            lists = gathered.setdefault(name, ({key: [] for key in measures}, kind))[0]
            for key, values in measures.items():  # (B,H,Nq) -> (H,R_batch)
                lists[key].append(values.permute(1, 0, 2)[:, analysed])
    return {
        name: ({key: torch.cat(parts, dim=1) for key, parts in lists.items()}, kind)
        for name, (lists, kind) in gathered.items()
    }


# --- summaries ------------------------------------------------------------------------------------


def summarise(measures: Measures, kind: str) -> dict[str, float]:
    """Measures (R,) of one map's analysed rows -> quantity: value."""
    entropy = measures["entropy"]
    if entropy.numel() == 0:  # e.g. self-attention over one-token targets: nothing to measure
        return {"rows": 0.0}
    summary = {"rows": float(entropy.numel()), "entropy_mean": entropy.mean().item()}
    summary.update({name: torch.quantile(entropy, q).item() for name, q in QUANTILES.items()})
    summary["max_weight_mean"] = measures["max_weight"].mean().item()
    summary[f"argmax_on_{SINK_TOKEN[kind]}_share"] = measures["argmax_on_sink"].mean().item()
    summary["argmax_on_top_key_share"] = measures["argmax_on_top_key"].mean().item()
    summary["chance_share"] = measures["chance"].mean().item()
    summary["row_entropy_nats_mean"] = measures["entropy_nats"].mean().item()
    if "logit_grad_norm" in measures:
        summary["logit_grad_norm_mean"] = measures["logit_grad_norm"].mean().item()
    if "next_weight" in measures:
        summary.update(next_position_summary(measures["next_weight"], measures["next_chance"]))
    padded = measures["padding_key_share"] > 0
    summary["rows_with_padding"] = float(padded.sum())
    if padded.any():
        summary["padding_mass_mean"] = measures["padding_mass"][padded].mean().item()
        summary["padding_key_share_mean"] = measures["padding_key_share"][padded].mean().item()
    return summary


def next_position_summary(weight: torch.Tensor, chance: torch.Tensor) -> dict[str, float]:
    """Over the rows with a real next position (weight not NaN): its mean weight and chance."""
    real = ~torch.isnan(weight)
    summary = {"rows_with_next_position": float(real.sum())}
    if real.any():
        summary["next_position_weight_mean"] = weight[real].mean().item()
        summary["next_position_chance"] = chance[real].mean().item()
    return summary


def map_groups(rows: dict[str, tuple[Measures, str]]) -> dict[str, tuple[Measures, str]]:
    """Per-head maps and pooled maps -> measures (R,): a Transformer layer's map gives one entry per
    head and one for its heads together; its cross layers together give "cross"."""
    groups: dict[str, tuple[Measures, str]] = {}
    for name, (measures, kind) in rows.items():
        if name.startswith("dec."):  # multi-head
            heads = next(iter(measures.values())).shape[0]
            for h in range(heads):
                groups[f"{name}.h{h}"] = ({k: v[h] for k, v in measures.items()}, kind)
        groups[name] = ({k: v.flatten() for k, v in measures.items()}, kind)
    cross_layers = [name for name in rows if name.startswith("dec.") and name.endswith(".cross")]
    if cross_layers:
        layers = [groups[name][0] for name in cross_layers]
        groups["cross"] = ({k: torch.cat([m[k] for m in layers]) for k in layers[0]}, "cross")
    return groups


def attention_table(run: str, model: torch.nn.Module, batches: list[Batch]) -> pd.DataFrame:
    """The tidy CSV's rows: run, map, quantity, value (one `no_attention` row without maps)."""
    rows = collect_rows(model, batches)
    if not rows:
        return pd.DataFrame([[run, "none", "no_attention", 1.0]], columns=CSV_COLUMNS)
    sentences = sum(len(batch.index) for batch in batches)
    records = [[run, "all", "sentences", float(sentences)]]
    for name, (measures, kind) in map_groups(rows).items():
        records += [[run, name, q, v] for q, v in summarise(measures, kind).items()]
    return pd.DataFrame(records, columns=CSV_COLUMNS)


# --- the example sentence -------------------------------------------------------------------------


@torch.no_grad()
def alignment_table(
    run: str, model: torch.nn.Module, batch: Batch, src: list[str], tgt: list[str]
) -> pd.DataFrame:
    """One sentence's cross attention in long format (ALIGNMENT_COLUMNS): the GRU's map (layer 0,
    head 0), or every decoder layer and head of the Transformer (0-based, as dec.<layer>); rows
    are the target pieces predicted (query_token), columns the source pieces (key_token). Empty
    without attention."""
    _, attention = model(batch.src, batch.tgt_in, return_attention=True)
    if "cross" in attention:
        maps = {0: attention["cross"][0][None]}  # (H=1,T,S)
    else:
        maps = {
            int(name.split(".")[1]): weights[0]
            for name, weights in attention.items()
            if name.startswith("dec.") and name.endswith(".cross")
        }
    records = [
        [run, layer, head, i, j, tgt[i], src[j], float(weights[head, i, j])]
        for layer, weights in sorted(maps.items())
        for head in range(weights.shape[0])
        for i in range(len(tgt))
        for j in range(len(src))
    ]
    return pd.DataFrame(records, columns=ALIGNMENT_COLUMNS)


# --- reading a run and its test sentences ---------------------------------------------------------


def test_pairs(
    sp, data_dir: Path, test_set: str, src: str, tgt: str, sentences: int, max_tokens: int
) -> tuple[list[list[int]], list[list[int]]]:
    """Subword ids of the first `sentences` pairs of a prepared split (no BOS/EOS yet)."""
    src_lines, tgt_lines = read_split(data_dir, test_set, src, tgt)
    if len(src_lines) != len(tgt_lines):
        raise ValueError(f"{data_dir}/{test_set}: {len(src_lines)} {src} vs {len(tgt_lines)} {tgt}")
    if sentences > len(src_lines):
        raise ValueError(
            f"--sentences {sentences} exceeds the {len(src_lines)} pairs of {data_dir}/{test_set}"
        )
    first = slice(0, sentences)
    return encode(sp, src_lines[first], max_tokens), encode(sp, tgt_lines[first], max_tokens)


def pieces(sp, ids: torch.Tensor) -> list[str]:
    """Non-padding ids (N,) -> sentencepiece pieces, with <s> and </s> for BOS and EOS."""
    names = {BOS: "<s>", EOS: "</s>"}
    return [names.get(i, sp.id_to_piece(i)) for i in ids.tolist() if i != PAD]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", required=True, type=Path, help="holds model.pt, meta.json")
    parser.add_argument("--spm", required=True, type=Path)
    parser.add_argument("--data-dir", required=True, type=Path)
    parser.add_argument("--test-set", required=True)
    parser.add_argument("--src", required=True)
    parser.add_argument("--tgt", required=True)
    parser.add_argument("--sentences", type=int, default=200, help="the first N test pairs")
    parser.add_argument("--example", type=int, default=0, help="index of the example sentence")
    parser.add_argument("--batch-tokens", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out-csv", required=True, type=Path, help="attention_<run>.csv")
    parser.add_argument("--out-alignment", required=True, type=Path, help="alignment_<run>.csv")
    args = parser.parse_args(argv)
    if args.sentences < 1:
        parser.error(f"--sentences must be at least 1, got {args.sentences}")
    if not 0 <= args.example < args.sentences:
        parser.error(f"--example must lie in [0, {args.sentences}), got {args.example}")
    torch.set_num_threads(args.threads)

    run = args.run_dir.name
    status = run_status(args.run_dir)
    alignment = pd.DataFrame(columns=ALIGNMENT_COLUMNS)
    if status != "ok":  # a diverged run is not analysed (nor translated): its weights mean nothing
        table = pd.DataFrame([[run, "none", status, 1.0]], columns=CSV_COLUMNS)
    else:
        sp = bpe.load(args.spm)
        model = load_model(args.run_dir / "model.pt")
        max_tokens = read_run_config(args.run_dir)["train"]["max_sentence_tokens"]
        src_ids, tgt_ids = test_pairs(
            sp, args.data_dir, args.test_set, args.src, args.tgt, args.sentences, max_tokens
        )
        batches = make_batches(src_ids, tgt_ids, args.batch_tokens, shuffle=False)
        table = attention_table(run, model, batches)
        e = args.example
        example = make_batches([src_ids[e]], [tgt_ids[e]], args.batch_tokens, shuffle=False)[0]
        alignment = alignment_table(
            run, model, example, pieces(sp, example.src[0]), pieces(sp, example.tgt_out[0])
        )
    for path in (args.out_csv, args.out_alignment):
        path.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out_csv, index=False)
    alignment.to_csv(args.out_alignment, index=False)
    print(f"{run}: {len(table)} rows -> {args.out_csv}; {len(alignment)} -> {args.out_alignment}")


if __name__ == "__main__":
    main()
