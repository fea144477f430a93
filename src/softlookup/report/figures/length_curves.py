"""Claim D1's length curves in every study, as Bahdanau et al.'s Figure 2: BLEU against the
source length of the fixed-vector and the attention model its effect compares, one panel per
study (this build, then each committed reference of `convergence.references`), 95% intervals,
seeds pooled.

python -m softlookup.report.figures.length_curves --results results \
    --config results/paper/config.json --runs R1 R2 --out results/figures/length_curves.pdf
"""

from __future__ import annotations

from ..facts import convergence
from ..labels import test_set_label
from ..study import Study
from . import cli, style
from .scores import bucket_panel


def length_curves_figure(study: Study):
    curves = convergence.length_curves(study, convergence.committed_references(study))
    panels = list(dict.fromkeys(zip(curves.study, curves.test_set, strict=True)))
    names = dict(zip(curves.study, curves.study_label, strict=True))
    fig, axes = style.subplots(max(len(panels), 1), height=2.4, sharey=True)
    if not panels:
        style.note(axes[0], "no length curve: claim D1's comparison was not scored")
        return fig
    styles = style.series_styles(curves.label)
    for ax, (name, test_set) in zip(axes, panels, strict=True):
        bucket_panel(ax, curves[(curves.study == name) & (curves.test_set == test_set)], styles)
        ax.set_title(f"{names[name]}\n{test_set_label(test_set)}")
    axes[0].set_ylabel("BLEU (%)")
    style.legend_below(fig, axes[0], ncol=len(styles))
    return fig


def main(argv: list[str] | None = None) -> None:
    cli.run(__doc__, length_curves_figure, argv)


if __name__ == "__main__":
    main()
