"""Attention maps of saved translators: normalised entropies, saturation, the gradient reaching the
attention logits, the mass on padding, the no-attention case, and the two CSVs the workflow reads
(nothing is drawn here)."""

import json
import re

import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from softlookup.analysis import attention_maps
from softlookup.data.batching import Batch, make_batches
from softlookup.models import PAD, build_model
from softlookup.models.checkpoint import model_file, save_atomic

from .corpora import tiny_corpus

TEST_SET = "test_2016_flickr"
MODELS = {
    "gru_additive-s1": {
        "arch": "gru",
        "attention": "additive",
        "emb_dim": 16,
        "hidden_dim": 16,
        "dropout": 0.0,
    },
    "transformer-s1": {
        "arch": "transformer",
        "d_model": 16,
        "heads": 2,
        "ffn_dim": 32,
        "enc_layers": 1,
        "dec_layers": 2,
        "dropout": 0.0,
        "max_len": 80,
    },
    "gru_none-s1": {
        "arch": "gru",
        "attention": "none",
        "emb_dim": 16,
        "hidden_dim": 16,
        "dropout": 0.0,
    },
}
ENTROPY = re.compile(r"entropy_")
SHARE = re.compile(r"_share$")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return tiny_corpus(tmp_path_factory.mktemp("data"), {"train": "train", TEST_SET: TEST_SET})


def saved_run(root, run: str, status: str = "ok"):
    """A run directory as train.py leaves it: model.pt (random weights) and meta.json."""
    torch.manual_seed(0)
    model = build_model(MODELS[run], 200)
    run_dir = root / run
    run_dir.mkdir()
    save_atomic(model_file({"model": MODELS[run]}, model, 200), run_dir / "model.pt")
    meta = {"status": status, "train_config": {"max_sentence_tokens": 64}}
    (run_dir / "meta.json").write_text(json.dumps(meta))
    config = {"run": run, "model": MODELS[run], "train": {"max_sentence_tokens": 64}, "seed": 1}
    (run_dir / "config.json").write_text(json.dumps(config))
    return run_dir


@pytest.fixture(scope="module")
def outputs(data, tmp_path_factory):
    """Run -> (attention table, alignment table) from the CLI over the first 12 test sentences."""
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("runs")
    data_dir, spm = data
    written = {}
    for run in MODELS:
        csv, alignment = root / f"attention_{run}.csv", root / f"alignment_{run}.csv"
        attention_maps.main(
            [
                *("--run-dir", str(saved_run(root, run)), "--spm", str(spm)),
                *("--data-dir", str(data_dir), "--test-set", TEST_SET, "--src", "de"),
                *("--tgt", "en", "--sentences", "12", "--example", "3"),
                *("--out-csv", str(csv), "--out-alignment", str(alignment)),
            ]
        )
        written[run] = (pd.read_csv(csv), pd.read_csv(alignment))
    return written


@pytest.mark.parametrize("run", ["gru_additive-s1", "transformer-s1"])
def test_cli_writes_a_tidy_csv_and_the_example_alignment(outputs, run):
    table, alignment = outputs[run]
    assert list(table.columns) == ["run", "map", "quantity", "value"]
    assert set(table.run) == {run}
    assert table.set_index(["map", "quantity"]).value["all", "sentences"] == 12
    entropies = table[table.quantity.str.match(ENTROPY)].value
    shares = table[table.quantity.str.contains(SHARE)].value
    assert len(entropies) and entropies.between(0, 1 + 1e-9).all()
    assert len(shares) and shares.between(0, 1).all()
    assert list(alignment.columns) == attention_maps.ALIGNMENT_COLUMNS
    assert set(alignment.run) == {run}
    # every (layer, head, query) row of the example's cross attention sums to one
    sums = alignment.groupby(["layer", "head", "query_pos"]).weight.sum()
    assert len(sums) and ((sums - 1).abs() < 1e-5).all()
    assert alignment.key_token.iloc[-1] == "</s>"  # the source's last piece is its EOS
    heads = {"gru_additive-s1": {(0, 0)}, "transformer-s1": {(0, 0), (0, 1), (1, 0), (1, 1)}}
    assert set(zip(alignment["layer"], alignment["head"], strict=True)) == heads[run]


def test_saturation_and_logit_gradients_are_measured(outputs):
    values = outputs["transformer-s1"][0].set_index(["map", "quantity"]).value
    assert values["dec.1.cross", "max_weight_mean"] <= 1
    assert values["dec.1.cross", "row_entropy_nats_mean"] >= 0
    assert values["dec.1.cross", "logit_grad_norm_mean"] > 0
    assert values["dec.0.cross.h1", "logit_grad_norm_mean"] > 0
    gru = outputs["gru_additive-s1"][0].set_index(["map", "quantity"]).value
    assert "logit_grad_norm_mean" not in gru["cross"]  # the GRU's weights are a copy
    assert gru["cross", "row_entropy_nats_mean"] >= 0


def test_logit_gradient_is_the_softmax_backward():
    """logit_gradients, given the weights P = softmax(s) of a map and the translator's logits
    made from them, returns autograd's dL/ds for L the batch's summed cross-entropy; a map whose
    weights are a copy outside the graph is left out."""
    torch.manual_seed(0)
    scores = torch.randn(2, 3, 4, 5, dtype=torch.float64, requires_grad=True)  # (B,H,Nq,Nk)
    weights = torch.softmax(scores, dim=-1)
    values = torch.randn(5, 7, dtype=torch.float64)  # keys -> a vocabulary of 7
    logits = (weights @ values).sum(1)  # (B,Nq,V)
    tgt_out = torch.tensor([[4, 5, 6, 2], [3, 6, 2, PAD]])  # padding is not in the loss
    batch = Batch(src=tgt_out, tgt_in=tgt_out, tgt_out=tgt_out, index=[0, 1])
    loss = F.cross_entropy(
        logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD, reduction="sum"
    )
    (expected,) = torch.autograd.grad(loss, [scores], retain_graph=True)
    maps = {"cross": (weights,), "copy": (weights.detach(),)}
    found = attention_maps.logit_gradients(logits, batch, maps)
    assert set(found) == {"cross"}
    torch.testing.assert_close(found["cross"], expected)
    assert expected[1, :, 3].abs().max() == 0 < expected[1, :, 2].abs().max()  # the PAD row


def test_transformer_maps_are_every_cross_head_and_the_last_self_layer(outputs):
    maps = set(outputs["transformer-s1"][0]["map"])
    cross = {f"dec.{i}.cross{head}" for i in (0, 1) for head in ("", ".h0", ".h1")}
    assert maps == {"all", "cross", "dec.1.self", "dec.1.self.h0", "dec.1.self.h1"} | cross
    assert set(outputs["gru_additive-s1"][0]["map"]) == {"all", "cross"}


def test_a_model_without_attention_says_so(outputs):
    table, alignment = outputs["gru_none-s1"]
    assert table.values.tolist() == [["gru_none-s1", "none", "no_attention", 1.0]]
    assert alignment.empty and list(alignment.columns) == attention_maps.ALIGNMENT_COLUMNS


def test_a_diverged_run_is_not_analysed(data, tmp_path):
    run_dir = saved_run(tmp_path, "transformer-s1", status="diverged")
    csv = tmp_path / "out.csv"
    attention_maps.main(
        [
            *("--run-dir", str(run_dir), "--spm", str(data[1]), "--data-dir", str(data[0])),
            *("--test-set", TEST_SET, "--src", "de", "--tgt", "en"),
            *("--out-csv", str(csv), "--out-alignment", str(tmp_path / "alignment.csv")),
        ]
    )
    assert pd.read_csv(csv).quantity.tolist() == ["diverged"]
    assert pd.read_csv(tmp_path / "alignment.csv").empty


@pytest.mark.parametrize("run", ["gru_additive-s1", "transformer-s1"])
def test_padding_changes_nothing(run):
    """Two sentences alone or in one padded batch (both sides padded): the same numbers, except
    the padding counts themselves; with the key padding mask no weight lands on padding."""
    torch.manual_seed(0)
    model = build_model(MODELS[run], 200).eval()
    src = [[5, 6, 7], [5, 6, 7, 8, 9, 10, 11, 12]]
    tgt = [[20, 21, 22, 23, 24, 25], [30, 31]]
    alone = [make_batches([s], [t], 1000, shuffle=False)[0] for s, t in zip(src, tgt, strict=True)]
    together = make_batches(src, tgt, 1000, shuffle=False)
    assert len(together) == 1 and (together[0].src == 0).any() and (together[0].tgt_in == 0).any()
    apart = attention_maps.attention_table(run, model, alone)
    padded = attention_maps.attention_table(run, model, together)
    padding = padded.quantity.str.contains("padding")
    assert padded[padded.quantity == "rows_with_padding"].value.max() > 0
    assert (padded[padded.quantity == "padding_mass_mean"].value == 0).all()
    unpadded = apart[~apart.quantity.str.contains("padding")].reset_index(drop=True)
    pd.testing.assert_frame_equal(unpadded, padded[~padding].reset_index(drop=True), rtol=1e-5)


def test_without_the_padding_mask_weight_lands_on_padding():
    torch.manual_seed(0)
    model = build_model({**MODELS["transformer-s1"], "padding_mask": False}, 200).eval()
    src = [[5, 6, 7], [5, 6, 7, 8, 9, 10, 11, 12]]
    tgt = [[20, 21, 22], [30, 31, 32]]
    table = attention_maps.attention_table("t", model, make_batches(src, tgt, 1000, shuffle=False))
    values = table.set_index(["map", "quantity"]).value
    share = values["cross", "padding_key_share_mean"]
    assert share == pytest.approx(5 / 9)  # the short source: 4 real keys (EOS included) of 9
    assert 0 < values["cross", "padding_mass_mean"] < 1


def test_uniform_rows_have_entropy_one_and_one_hot_rows_zero():
    query_pad = torch.tensor([[False] * 4, [False, False, True, True]])  # (B=2,Nq=4)
    key_pad = torch.tensor([[False] * 5, [False, False, False, True, True]])  # (B,Nk=5)
    visible = attention_maps.visible_keys(query_pad, key_pad, causal=False)  # (B,Nq,Nk)
    eos = torch.tensor([4, 2])
    uniform = (visible / visible.sum(-1, keepdim=True).clamp(min=1))[:, None]  # (B,1,Nq,Nk)
    measures = attention_maps.row_measures(uniform, visible, eos, key_pad)
    analysed = measures["analysed"]
    assert analysed.tolist() == [[True] * 4, [True, True, False, False]]
    entropy = measures["entropy"][:, 0][analysed]
    torch.testing.assert_close(entropy, torch.ones_like(entropy))
    torch.testing.assert_close(
        measures["chance"][:, 0][analysed],
        1 / torch.tensor([5.0] * 4 + [3.0] * 2, dtype=torch.float64),
    )

    on_eos = torch.nn.functional.one_hot(eos, 5)[:, None, None].expand(2, 1, 4, 5).double()
    measures = attention_maps.row_measures(on_eos, visible, eos, key_pad)
    for name, expected in [
        ("entropy", 0.0),
        ("max_weight", 1.0),
        ("argmax_on_sink", 1.0),
        ("argmax_on_top_key", 1.0),
    ]:
        assert (measures[name][:, 0][analysed] == expected).all(), name


def test_a_causal_row_seeing_one_key_is_not_analysed():
    no_pad = torch.zeros(1, 3, dtype=torch.bool)
    visible = attention_maps.visible_keys(no_pad, no_pad, causal=True)  # (1,3,3)
    assert visible[0].sum(-1).tolist() == [1, 2, 3]
    weights = (visible / visible.sum(-1, keepdim=True))[:, None]
    measures = attention_maps.row_measures(
        weights, visible, torch.zeros(1, dtype=torch.long), no_pad
    )
    assert measures["analysed"].tolist() == [[False, True, True]]


def test_the_weight_on_the_next_position_measures_copying():
    """A row that copies puts its weight on the next position (the token it predicts); the causal
    mask hides that position, so a masked row puts none there; padding has no next token."""
    key_pad = torch.tensor([[False, False, False, True]])  # (B=1,T=4): three real positions
    visible = attention_maps.visible_keys(key_pad, key_pad, causal=False)
    copying = torch.diag(torch.ones(3), 1)[None, None].double()  # (1,1,4,4): row i on i + 1
    measures = attention_maps.next_position_measures(copying, visible, key_pad)
    assert measures["next_weight"][0, 0, :2].tolist() == [1.0, 1.0]
    assert measures["next_weight"][0, 0, 2:].isnan().all()  # the next one is padding / past end
    assert measures["next_chance"][0, 0, :2].tolist() == [1 / 3, 1 / 3]
    causal = attention_maps.visible_keys(key_pad, key_pad, causal=True)
    masked = (causal / causal.sum(-1, keepdim=True).clamp(min=1))[:, None].double()
    assert attention_maps.next_position_measures(masked, causal, key_pad)["next_weight"][
        0, 0, :2
    ].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("causal_mask, copies_nothing", [(True, True), (False, False)])
def test_only_a_decoder_without_the_causal_mask_can_weigh_the_next_position(
    causal_mask, copies_nothing
):
    torch.manual_seed(0)
    model = build_model({**MODELS["transformer-s1"], "causal_mask": causal_mask}, 200).eval()
    src, tgt = [[5, 6, 7, 8]], [[20, 21, 22, 23, 24]]
    table = attention_maps.attention_table("t", model, make_batches(src, tgt, 1000, shuffle=False))
    values = table.set_index(["map", "quantity"]).value
    assert (values["dec.1.self.h0", "next_position_weight_mean"] == 0) == copies_nothing
    assert values["dec.1.self", "next_position_chance"] > 0
    assert "next_position_weight_mean" not in values["dec.1.cross"]
