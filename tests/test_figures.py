"""Every figure readable at print size, checked from the figure objects (not by eye): drawn from
the committed reference of the default config (tests/figure_data.py), each is as wide as the
paper's text, keeps every text inside it at 7 pt or more, puts legends outside the data, draws
at most six series a panel with their own colour and marker, and gives every labelled x position
of a panel some data (no panel of a single x value, no empty bucket)."""

from __future__ import annotations

import dataclasses
import re

import pandas as pd
import pytest
from matplotlib.text import Text

from softlookup.report import labels, numbers
from softlookup.report.facts import pooling
from softlookup.report.figures import (
    alignment,
    convergence,
    cost,
    length_curves,
    probes,
    scores,
    seed_variance,
    style,
    training,
)
from softlookup.report.study import load
from softlookup.tables import SEED_VARIANCE_COLUMNS

from .figure_data import ROOT, reference_results

FIGURES = {
    "bleu_by_length": lambda study: scores.draw(study, "bleu_by_length"),
    "sweep_scaling": lambda study: scores.draw(study, "sweep_scaling"),
    "sweep_heads": lambda study: scores.draw(study, "sweep_heads"),
    "training": training.training_figure,
    "convergence": convergence.convergence_figure,
    "length_curves": length_curves.length_curves_figure,
    "cost": cost.cost_figure,
    "alignment": alignment.alignment_figure,
    "probes": probes.probes_figure,
    "seed_variance": seed_variance.seed_variance_figure,
}
CAPS = {"_", "|", "None", "", None}  # error-bar caps and plain lines: not a series' marker


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    results = reference_results(tmp_path_factory.mktemp("figures"))
    return load(results, results / "paper" / "config.json")


@pytest.fixture(scope="module", params=sorted(FIGURES))
def figure(request, study):
    style.setup()
    fig = FIGURES[request.param](study)
    fig.canvas.draw()  # the constrained layout places every artist
    yield fig
    style.save(fig, study.results / f"{request.param}.pdf")


def panels(fig):
    """The data axes of a figure (no colour bar, none hidden)."""
    return [ax for ax in fig.get_axes() if ax.get_visible() and ax.get_label() != "<colorbar>"]


def series(ax):
    """The lines of a panel that are a series: those drawn with a marker."""
    return [
        line for line in ax.get_lines() if line.get_marker() not in CAPS and len(line.get_xdata())
    ]


def test_the_default_papers_text_width_is_the_figures_width():
    preamble = (ROOT / "paper" / "paper.tex").read_text()
    assert "a4paper" in preamble  # 210 mm wide
    margin = re.search(r"\\usepackage\[margin=([\d.]+)cm\]\{geometry\}", preamble)
    assert margin, "paper.tex: no geometry margin to derive the text width from"
    assert style.WIDTH == pytest.approx((210 - 2 * 10 * float(margin.group(1))) / 25.4)


def test_a_figure_is_drawn_at_the_printed_width_and_nothing_leaves_it(figure):
    width, height = figure.get_size_inches()
    assert width == pytest.approx(style.WIDTH) and height < 9.5  # fits a page of text
    drawn = figure.get_tightbbox(figure.canvas.get_renderer())  # inches, what is drawn
    assert drawn.x0 >= -0.01 and drawn.y0 >= -0.01, drawn
    assert drawn.x1 <= width + 0.01 and drawn.y1 <= height + 0.01, drawn


def test_every_text_is_at_least_7_pt(figure):
    small = {
        (t.get_text(), t.get_fontsize())
        for t in figure.findobj(Text)
        if t.get_visible() and t.get_text().strip() and t.get_fontsize() < style.MIN_FONT
    }
    assert not small


def test_legends_sit_outside_the_data(figure):
    renderer = figure.canvas.get_renderer()
    legends = [
        *figure.legends,
        *(sub_legend for sub in figure.subfigs for sub_legend in sub.legends),
        *(ax.get_legend() for ax in figure.get_axes() if ax.get_legend()),
    ]
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in panels(figure):
            assert not box.overlaps(ax.get_window_extent(renderer)), ax.get_title()


def test_a_panel_has_at_most_six_series_each_its_own_colour_and_marker(figure):
    for ax in panels(figure):
        looks = [(str(line.get_color()), line.get_marker()) for line in series(ax)]
        assert len(looks) <= style.MAX_SERIES, ax.get_title()
        assert len(set(looks)) == len(looks), ax.get_title()


def test_no_two_tick_labels_of_an_axis_read_alike(figure):
    # a narrow range labelled to two decimals once printed 0.60, 0.60, 0.61, 0.61
    for ax in panels(figure):
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            labels = [
                tick.label1.get_text()
                for tick in axis.get_major_ticks()
                if low <= tick.get_loc() <= high and tick.label1.get_visible()
            ]
            labels = [label for label in labels if label]
            assert len(set(labels)) == len(labels), (ax.get_title(), labels)


@pytest.mark.parametrize("low, high", [(0.598, 0.6155), (0.5, 0.52), (0.0, 0.93)])
def test_a_narrow_range_is_labelled_at_ticks_its_rule_prints_as_they_are(low, high):
    fig, ax = style.plt.subplots(figsize=(style.WIDTH / 2, 2))
    ax.plot([1, 2, 4, 8], [low, high, low, high])
    style.number_axis(ax, numbers.share)
    fig.canvas.draw()
    shown = [t for t in ax.get_yticks() if low - 0.01 <= t <= high + 0.01]
    labels = [numbers.share(t) for t in shown]
    assert len(shown) >= 2 and len(set(labels)) == len(labels)
    assert all(float(label) == pytest.approx(t) for label, t in zip(labels, shown, strict=True))
    style.plt.close(fig)


def test_effect_paths_and_length_curves_name_comparisons_and_references_for_a_reader(study):
    fig = convergence.convergence_figure(study)
    entries = [t.get_text() for legend in fig.legends for t in legend.get_texts()] + [
        t.get_text() for sub in fig.subfigs for legend in sub.legends for t in legend.get_texts()
    ]
    entries = [" ".join(entry.split()) for entry in entries]  # a legend wraps its long labels
    assert "8 heads vs 1 head (heads, seeds 3\u20135)" in entries  # the build's corpus unsaid
    assert "additive vs no attention (Europarl it-en, seeds 1 and 2)" in entries
    titles = [ax.get_title() for ax in length_curves.length_curves_figure(study).axes]
    assert "Europarl it-en, seeds 1 and 2\nEuroparl test days" in titles
    entries += [title.split("\n")[0] for title in titles]
    words = [re.sub(r"\$[^$]*\$", "", entry) for entry in entries]  # mathtext may hold d_k
    assert not [w for w in words if "_" in w or "--" in w or "converged" in w]


def test_a_crowded_claim_is_split_into_one_effect_panel_per_comparison(study):
    fig = convergence.convergence_figure(study)
    titles = [ax.get_title() for ax in fig.axes]
    assert all(len(ax.containers) <= convergence.MAX_SERIES for ax in fig.axes), titles
    # D5: two comparisons (8 heads and the base model's 4, each against 1 head) in three studies
    assert sorted(t for t in titles if t.startswith("D5")) == [
        "D5: 4 heads vs 1 head",  # the base model, named by its heads (labels.pair_labels)
        "D5: 8 heads vs 1 head",
    ]


def setting_axis(ax) -> str:
    """The axis a panel's settings lie along: x, unless its rows are named on the y axis (words
    at whole-number positions, the measured value along x; a unit such as "2 ms" is no name)."""
    named = [t for t in ax.get_yticklabels() if t.get_text()]
    words = [re.sub(r"\$[^$]*\$", "", t.get_text()) for t in named]
    rows = all(float(t.get_position()[1]).is_integer() for t in named)
    return "y" if rows and any(re.search(r"[A-Za-z]", text) for text in words) else "x"


def test_every_labelled_setting_has_data_and_a_panel_two(figure):
    for ax in panels(figure):
        lines = series(ax)
        if not lines:
            continue  # a heatmap, or a panel that says it has no data
        along = 0 if setting_axis(ax) == "x" else 1  # index into (x, y)
        axis = (ax.xaxis, ax.yaxis)[along]
        linear = axis.get_scale() == "linear"
        xs = sorted(
            {
                round(float(x)) if linear else float(x)
                for line in lines
                for x in line.get_data()[along]
            }
        )
        assert len(xs) >= 2, ax.get_title()
        low, high = sorted(axis.get_view_interval())
        positions = [
            tick.get_position()[along] for tick in axis.get_ticklabels() if tick.get_text()
        ]
        labelled = [x for x in positions if low <= x <= high]
        for x in labelled:
            assert any(abs(x - seen) <= 0.5 or abs(x - seen) <= 0.01 * abs(x) for seen in xs), (
                ax.get_title(),
                x,
            )


def test_a_series_too_many_is_an_error_naming_them():
    with pytest.raises(ValueError, match="7 series in one panel .*split the panel"):
        style.series_styles([f"model {i}" for i in range(7)])


def test_the_bleu_by_length_panels_hold_only_the_buckets_their_test_set_fills(study):
    style.setup()
    fig = scores.draw(study, "bleu_by_length")
    flickr = [ax for ax in fig.get_axes() if ax.get_title().endswith("2016 Flickr test set")]
    assert flickr and all(
        [t.get_text() for t in ax.get_xticklabels()] == ["1-10", "11-15", "16-20"] for ax in flickr
    )


def test_the_cost_figure_names_backends_for_a_reader_and_facets_devices(study):
    style.setup()
    fig = cost.cost_figure(study)
    names = {t.get_text() for legend in fig.legends for t in legend.get_texts()}
    assert {"PyTorch cuDNN", "Triton, atomic dQ", "naive (scores materialised)"} <= names
    assert not any("_" in name or "cuda" in name for name in names)
    titles = [ax.get_title() for ax in panels(fig)]
    assert "attention, CPU" in titles and "attention, GPU (NVIDIA H200)" in titles
    assert "memory, GPU (NVIDIA H200)" in titles


def test_numbers_have_one_rule_per_kind():
    assert numbers.bleu(27.34) == "27.3" and numbers.bleu(-4.0, sign=True) == "-4.0"
    assert numbers.share(0.2634) == "0.26"
    assert numbers.p(0.0002) == "< 0.001" and numbers.p(0.0432) == "0.043"
    assert [numbers.seconds(v) for v in (0.0123, 2.5e-5, 240.0)] == ["12.3 ms", "25 µs", "240 s"]
    assert numbers.interval(-5.75, -4, sign=True) == "[-5.8, -4.0]"
    assert numbers.interval(0.194, 0.356, numbers.share) == "[0.19, 0.36]"


def test_the_seed_variance_figure_draws_each_familys_seed_sds(study):
    style.setup()
    drawn = pooling.panels(study)
    fig = seed_variance.seed_variance_figure(study)
    axes = panels(fig)
    # GRU and Transformer (2 epochs), each on two test sets; the base Transformer (3 epochs) is
    # its family's one variant, compared on test_long across families only, and not drawn
    assert len(axes) == len(drawn) == 4
    for ax, panel in zip(axes, drawn, strict=True):
        (points,) = series(ax)  # the variants' SDs: one series, and no pooled line
        assert list(points.get_ydata()) == [row["seed_sd"] for row in panel["rows"]]
        assert len(ax.get_lines()) == 1
        assert ax.get_title().startswith(
            f"{panel['family_label']}, {labels.test_set_label(panel['test_set'])}\n"
        )
        ticks = [t.get_text() for t in ax.get_xticklabels()]
        assert not [t for t in ticks for v in study.seed_variance.variant if v in t], ticks
    titles = [ax.get_title() for ax in axes]
    # the default trains D2's GRUs on seeds 1-4, the others on 1-2 (config more_seeds)
    assert "GRU, 2 epochs, 2016 Flickr test set\n2-4 seeds a variant" in titles
    gru = next(ax for ax in axes if ax.get_title().startswith("GRU"))
    assert gru.get_xlabel() == "variant of GRU"
    assert [t.get_text() for t in gru.get_xticklabels()] == [
        "additive",
        "dot",
        "general",
        "scaled dot",
    ]


def test_a_panels_variants_are_named_by_what_each_adds_to_their_shared_label():
    shared, own = labels.own_parts(["T, 1+1 layers", "T, 1+1 layers, 8 heads"])
    assert shared == "T, 1+1 layers" and own == {
        "T, 1+1 layers": "base model",
        "T, 1+1 layers, 8 heads": "8 heads",
    }
    assert labels.own_parts(["GRU, dot", "T"]) == ("", {"GRU, dot": "GRU, dot", "T": "T"})
    assert labels.run_family_label("transformer, 2 epochs") == "Transformer, 2 epochs"


def one_seed(table: pd.DataFrame) -> pd.DataFrame:
    """The table as compare writes it when every variant has one seed: no SD."""
    return table.assign(seeds=1, seed_sd=float("nan"))


@pytest.mark.parametrize("case", ["missing", "empty", "one seed"])
def test_the_seed_variance_figure_without_a_seed_sd_says_so_and_draws_no_panel(study, case):
    table = {
        "missing": pd.DataFrame(),
        "empty": pd.DataFrame(columns=SEED_VARIANCE_COLUMNS),
        "one seed": one_seed(study.seed_variance),
    }[case]
    empty = dataclasses.replace(study, seed_variance=table)
    assert not pooling.panels(empty)
    style.setup()
    fig = seed_variance.seed_variance_figure(empty)
    fig.canvas.draw()
    (ax,) = panels(fig)
    assert not series(ax) and not ax.get_title()
    assert any(text.get_text().startswith("no seed variance to show") for text in ax.texts)
    width, _ = fig.get_size_inches()
    assert width == pytest.approx(style.WIDTH)
