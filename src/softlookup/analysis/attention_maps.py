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
A run without attention, or one that diverged, has no maps: its CSV says so in one row and its
figure in its title, so the outputs exist for every run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
import torch

from ..data import bpe
from ..data.batching import Batch, encode, make_batches, read_split
from ..kernels.masks import allowed_keys
from ..models import BOS, EOS, PAD
from ..evaluate.translate import load_model

CSV_COLUMNS = ["run", "map", "quantity", "value"]
QUANTILES = {"entropy_q05": 0.05, "entropy_q25": 0.25, "entropy_median": 0.5,
             "entropy_q75": 0.75, "entropy_q95": 0.95}  # fmt: skip
SINK_TOKEN = {"cross": "eos", "self": "bos"}  # the key each kind of map may sink its weight into
MAX_HEAD_PANELS = 8  # the example figure shows single heads only up to this many
PANELS_PER_ROW = 3

Measures = dict[str, torch.Tensor]


# --- which maps, and which keys each of their rows can see ---------------------------------------


def studied_maps(attention: dict[str, torch.Tensor], causal_self: bool, batch: Batch) -> dict:
    """The maps this analysis studies, each as (weights (B,H,Nq,Nk), visible (B,Nq,Nk), sink (B,),
    kind), from a model's `return_attention` dict (empty for a model without attention)."""
    src_pad, tgt_pad = batch.src == PAD, batch.tgt_in == PAD  # (B,S), (B,T)
    cross_visible = visible_keys(tgt_pad, src_pad, causal=False)  # (B,T,S)
    eos = (~src_pad).sum(dim=1) - 1  # (B,) the source EOS closes every row of src
    if "cross" in attention:  # GRU: (B,T,S), one head
        return {"cross": (attention["cross"][:, None], cross_visible, eos, "cross")}
    decoder_layers = sorted(
        {int(name.split(".")[1]) for name in attention if name.startswith("dec.")}
    )
    maps = {
        f"dec.{i}.cross": (attention[f"dec.{i}.cross"], cross_visible, eos, "cross")
        for i in decoder_layers
    }
    if decoder_layers:
        last = f"dec.{decoder_layers[-1]}.self"
        self_visible = visible_keys(tgt_pad, tgt_pad, causal=causal_self)  # (B,T,T)
        maps[last] = (attention[last], self_visible, torch.zeros_like(eos), "self")  # BOS at 0
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


# --- per-row measures ----------------------------------------------------------------------------


def row_measures(weights: torch.Tensor, visible: torch.Tensor, sink: torch.Tensor) -> Measures:
    """weights (B,H,Nq,Nk), visible (B,Nq,Nk), sink (B,) -> per measure (B,H,Nq), plus
    "analysed" (B,Nq): the real rows that see at least two keys (only those are meant)."""
    seen = visible[:, None].to(torch.float64)  # (B,1,Nq,Nk)
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
        "analysed": analysed,
    }


@torch.no_grad()
def collect_rows(model: torch.nn.Module, batches: list[Batch]) -> dict[str, tuple[Measures, str]]:
    """Map -> (measure -> (H,R) over the analysed rows of every batch, kind of map)."""
    causal_self = bool(getattr(model.config, "causal_mask", True))
    gathered: dict[str, tuple[dict[str, list[torch.Tensor]], str]] = {}
    for batch in batches:
        _, attention = model(batch.src, batch.tgt_in, return_attention=True)
        for name, (weights, visible, sink, kind) in studied_maps(
            attention, causal_self, batch
        ).items():
            measures = row_measures(weights, visible, sink)
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


# --- the example figure ---------------------------------------------------------------------------


@torch.no_grad()
def example_panels(model: torch.nn.Module, batch: Batch) -> dict[str, torch.Tensor]:
    """One sentence's cross attention as titled (T,S) panels: the GRU's map, or the Transformer's
    last decoder layer averaged over heads, then each head (up to MAX_HEAD_PANELS); {} if none."""
    _, attention = model(batch.src, batch.tgt_in, return_attention=True)
    if "cross" in attention:
        return {"cross attention": attention["cross"][0]}
    cross = [name for name in attention if name.startswith("dec.") and name.endswith(".cross")]
    if not cross:
        return {}
    last = max(cross, key=lambda name: int(name.split(".")[1]))
    weights = attention[last][0]  # (H,T,S)
    panels = {f"{last}, mean of {len(weights)} heads": weights.mean(dim=0)}
    if 1 < len(weights) <= MAX_HEAD_PANELS:
        panels.update({f"head {h}": w for h, w in enumerate(weights)})
    return panels


def message_figure(title: str, message: str):
    """A figure that only says why there is nothing to draw."""
    fig, ax = plt.subplots(figsize=(4, 1.2))
    ax.set_title(title, fontsize=9)
    ax.text(0.5, 0.5, message, ha="center", va="center")
    ax.axis("off")
    return fig


def alignment_figure(title: str, panels: dict[str, torch.Tensor], src: list[str], tgt: list[str]):
    """Heatmaps of (T,S) weights: rows the target pieces predicted, columns the source pieces."""
    if not panels:
        return message_figure(f"{title}: no attention", "this model has no attention weights")
    columns = min(len(panels), PANELS_PER_ROW)
    rows = -(-len(panels) // columns)
    width = max(2.5, 0.22 * len(src) + 0.8)
    height = max(2.0, 0.2 * len(tgt) + 1.0)
    fig, axes = plt.subplots(
        rows,
        columns,
        figsize=(width * columns, height * rows),
        squeeze=False,
        sharey=True,
        layout="constrained",
    )
    top = max(weights.max().item() for weights in panels.values())  # one colour scale for all
    for ax, (name, weights) in zip(axes.flat, panels.items()):
        sns.heatmap(
            weights.numpy(), ax=ax, vmin=0, vmax=top, cmap="Greys", square=True,
            cbar=False, xticklabels=src, yticklabels=tgt,
        )  # fmt: skip
        ax.set_title(name, fontsize=8)
        ax.tick_params(labelsize=6, length=0)
        ax.set_xticklabels(src, rotation=90)
    for ax in axes.flat[len(panels) :]:
        ax.axis("off")
    fig.colorbar(axes.flat[0].collections[0], ax=axes, shrink=0.6, label="weight")
    fig.suptitle(title, fontsize=9)
    return fig


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


def run_status(run_dir: Path) -> tuple[str, dict]:
    """meta.json's status ("ok" or "diverged") and train config; a clear error if it is missing."""
    meta_path = run_dir / "meta.json"
    if not meta_path.is_file():
        raise FileNotFoundError(f"run metadata not found: {meta_path}")
    meta = json.loads(meta_path.read_text())
    return meta["status"], meta["train_config"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", required=True, type=Path, help="holds model.pt, meta.json")
    parser.add_argument("--spm", required=True, type=Path)
    parser.add_argument("--data-dir", required=True, type=Path)
    parser.add_argument("--test-set", required=True)
    parser.add_argument("--src", required=True)
    parser.add_argument("--tgt", required=True)
    parser.add_argument("--sentences", type=int, default=200, help="the first N test pairs")
    parser.add_argument("--example", type=int, default=0, help="index of the figure's sentence")
    parser.add_argument("--batch-tokens", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out-csv", required=True, type=Path)
    parser.add_argument("--out-figure", required=True, type=Path)
    args = parser.parse_args(argv)
    if args.sentences < 1:
        parser.error(f"--sentences must be at least 1, got {args.sentences}")
    if not 0 <= args.example < args.sentences:
        parser.error(f"--example must lie in [0, {args.sentences}), got {args.example}")
    torch.set_num_threads(args.threads)

    run = args.run_dir.name
    status, train_config = run_status(args.run_dir)
    if status != "ok":  # a diverged run is not analysed (nor translated): its weights mean nothing
        table = pd.DataFrame([[run, "none", status, 1.0]], columns=CSV_COLUMNS)
        fig = message_figure(f"{run}: {status}, no attention maps", "its weights are not analysed")
    else:
        sp = bpe.load(args.spm)
        model = load_model(args.run_dir / "model.pt")
        src_ids, tgt_ids = test_pairs(
            sp, args.data_dir, args.test_set, args.src, args.tgt, args.sentences,
            train_config["max_sentence_tokens"],
        )  # fmt: skip
        batches = make_batches(src_ids, tgt_ids, args.batch_tokens, shuffle=False)
        table = attention_table(run, model, batches)
        e = args.example
        example = make_batches([src_ids[e]], [tgt_ids[e]], args.batch_tokens, shuffle=False)[0]
        fig = alignment_figure(
            f"{run}, {args.test_set} sentence {e}",
            example_panels(model, example),
            pieces(sp, example.src[0]),
            pieces(sp, example.tgt_out[0]),
        )
    for path in (args.out_csv, args.out_figure):
        path.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out_csv, index=False)
    fig.savefig(args.out_figure, bbox_inches="tight")
    plt.close(fig)
    print(f"{run}: {len(table)} rows -> {args.out_csv}; figure -> {args.out_figure}")


if __name__ == "__main__":
    main()
