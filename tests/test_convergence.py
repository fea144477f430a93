"""The training-budget section's facts: effect paths across this build and committed references,
verdicts at convergence, and which runs stopped still improving."""

import json
import math

import pandas as pd
import pytest

from softlookup.report.facts import convergence
from softlookup.report.figures import convergence as figure
from softlookup.report.study import read_reference

from .project import ROOT

EFFECTS = {
    "D3": [{"comparison": "d3_dk128"}],
    "D1": [{"comparison": "d1", "bucket": ">60", "metric": "bleu_share"}],
}


def comparison_rows(name, deltas, bucket="all", metric="bleu"):
    return [
        {
            "comparison": name,
            "bucket": bucket,
            "metric": metric,
            "epoch": epoch,
            "delta": delta,
            "ci_low": delta - 1,
            "ci_high": delta + 1,
            "p_value": 0.01,
            "seeds": 2,
        }
        for epoch, delta in deltas.items()
    ]


def write_reference(folder, claims, comparisons, training, scores=()):
    folder.mkdir(parents=True)
    if scores:
        pd.DataFrame(scores).to_csv(folder / "scores.csv", index=False)
    pd.DataFrame(comparisons).to_csv(folder / "comparisons.csv", index=False)
    pd.DataFrame(claims).to_csv(folder / "claims.csv", index=False)
    pd.DataFrame(training).to_csv(folder / "training.csv", index=False)
    provenance = {
        "config_name": folder.name,
        "environment": {"commit": "abcdef1234"},
        "config": {"train": {"epochs": 10, "patience": 2, "ladder": [1, 2, "final"]}},
    }
    (folder / "provenance.json").write_text(json.dumps(provenance))
    return read_reference(folder)


def training_log(run, losses, cap):
    return [
        {
            "run": run,
            "variant": run.rsplit("-s", 1)[0],
            "epoch": i + 1,
            "val_loss": loss,
            "epochs": cap,
        }
        for i, loss in enumerate(losses)
    ]


@pytest.fixture
def reference(tmp_path):
    return write_reference(
        tmp_path / "converged_scale",
        claims=[
            {
                "id": "D3",
                "verdict": "partly",
                "reason": "wrong_side",
                "checks_passed": 1,
                "checks_decisive": 2,
            },
            {"id": "D1", "verdict": "pending", "reason": "not trained here"},
        ],
        comparisons=comparison_rows("d3_dk128", {"1": 9.0, "2": 6.0, "4": 2.0, "final": 0.5})
        + comparison_rows("d3_dk128", {"final": 7.0}, bucket="1-10"),
        training=training_log("a-s1", [3.0, 2.5, 2.45, 2.44], cap=4)
        + training_log("b-s1", [3.0, 2.0, 2.1, 2.2], cap=10),
    )


def test_effect_paths_put_this_build_beside_each_reference_point_by_point(reference):
    here = pd.DataFrame(
        comparison_rows("d3_dk128", {"final": 12.0})
        + comparison_rows("d1", {"final": 0.2}, bucket=">60", metric="bleu_share")
    )
    paths = convergence.effect_paths(here, [reference], EFFECTS)
    d3 = paths[paths.claim == "D3"].set_index(["study", "epoch"]).delta
    assert d3.to_dict() == {
        (convergence.STUDY, "final"): 12.0,
        ("converged_scale", "1"): 9.0,
        ("converged_scale", "2"): 6.0,
        ("converged_scale", "4"): 2.0,
        ("converged_scale", "final"): 0.5,
    }
    d1 = paths[paths.claim == "D1"]
    assert d1.study.tolist() == [convergence.STUDY] and d1.metric.tolist() == ["bleu_share"]
    assert convergence.point_order(paths.epoch) == ["1", "2", "4", "final"]
    at_two = convergence.effect_paths(here, [reference], EFFECTS, epochs=2)
    d3 = at_two[at_two.claim == "D3"].set_index(["study", "epoch"]).delta
    assert d3[(convergence.STUDY, "2")] == 12.0 and (convergence.STUDY, "final") not in d3


def test_a_verdict_at_convergence_comes_from_the_reference_that_decides_it(reference):
    here = pd.DataFrame(
        [{"id": "D3", "verdict": "reproduced"}, {"id": "D1", "verdict": "reproduced"}]
    )
    table = convergence.verdict_table(here, [reference], ["D1", "D3"]).set_index("claim")
    assert table.loc["D3", ["verdict", "converged", "moved"]].tolist() == [
        "reproduced",
        "partly",
        True,
    ]
    assert (
        table.loc["D3", "reference"] == "converged_scale"
        and table.loc["D3", "reason"] == "wrong_side"
    )
    assert table.loc["D1", ["converged", "moved"]].tolist() == ["not run", False]


def test_a_claim_two_references_decide_gets_a_row_from_each(reference, tmp_path):
    """The converged study (Multi30k) and the long-sentence study (Europarl) both decide D1: the
    table shows both verdicts, and a claim that moves in one is not counted as held."""
    long = write_reference(
        tmp_path / "long",
        claims=[{"id": "D1", "verdict": "partly", "reason": "no gap past 60"}],
        comparisons=comparison_rows("d1", {"final": 0.1}, bucket=">60", metric="bleu_share"),
        training=training_log("none-s1", [3.0, 2.9], cap=10),
    )
    captions = write_reference(
        tmp_path / "converged_recurrent",
        claims=[{"id": "D1", "verdict": "reproduced", "reason": "kept"}],
        comparisons=comparison_rows("d1", {"final": 0.3}, bucket=">60", metric="bleu_share"),
        training=training_log("none-s1", [3.0, 2.9], cap=10),
    )
    here = pd.DataFrame([{"id": "D1", "verdict": "reproduced"}, {"id": "D3", "verdict": "partly"}])
    table = convergence.verdict_table(here, [captions, long, reference], ["D1", "D3"])
    assert table[["claim", "reference", "converged", "moved"]].values.tolist() == [
        ["D1", "converged_recurrent", "reproduced", False],
        ["D1", "long", "partly", True],
        ["D3", "converged_scale", "partly", False],
    ]
    assert convergence.fates(table.to_dict("records")) == {
        "moved_claims": ["D1"],
        "held": ["D3"],
        "not_run": [],
    }


def test_a_moved_claim_is_told_with_its_systems_bleu_there(tmp_path):
    """The sentence of a moved claim gives the reference's whole-test BLEU of the two systems
    its effect compares (final models, seeds pooled), so a floor is visible."""
    scores = [
        {
            "variant": variant,
            "seed": seed,
            "epoch": epoch,
            "test_set": "test_europarl",
            "bucket": bucket,
            "metric": "bleu",
            "value": value + seed,
            "ci_low": 0,
            "ci_high": 20,
            "status": "ok",
        }
        for variant, value in (("none", 1.0), ("additive", 7.0))
        for seed in (1, 2)
        for epoch in ("2", "final")
        for bucket in ("all", ">60")
    ]
    pairs = [
        {**row, "system_a": "none", "system_b": "additive", "test_set": "test_europarl"}
        for row in comparison_rows("d1", {"final": 0.1})
    ]
    long = write_reference(
        tmp_path / "long",
        claims=[{"id": "D1", "verdict": "partly"}],
        comparisons=pairs,
        training=training_log("none-s1", [3.0, 2.9], cap=10),
        scores=scores,
    )
    levels = convergence.system_levels(long, "d1", {"none": "GRU, no attention"})
    assert levels == {
        "test_set": "test_europarl",
        "systems": [
            {"label": "GRU, no attention", "bleu": 2.5},
            {"label": "additive", "bleu": 8.5},
        ],
    }
    assert convergence.system_levels(long, "d2", {}) == {}


def test_runs_at_their_cap_and_still_improving_are_named(reference):
    runs = convergence.convergence_of_runs(reference.training).set_index("run")
    assert runs.loc["a-s1", ["hit_cap", "still_improving"]].tolist() == [True, False]  # 0.4%
    assert runs.loc["b-s1", ["hit_cap", "best_epoch", "still_improving"]].tolist() == [
        False,
        2,
        False,
    ]
    steep = convergence.convergence_of_runs(pd.DataFrame(training_log("c-s1", [3, 2.9], 2)))
    assert steep.still_improving.tolist() == [True]  # 3.3% at its last epoch


def test_a_reference_says_which_interval_rule_judged_it(reference):
    """Read from the columns its comparisons.csv has: one without seed columns came from the
    bootstrap, one with se_seed alone from the pooled seed variance, one with each system's
    interval (ci_low_a) from its own seeds."""
    table = reference.comparisons
    assert convergence.interval_rule(table) == "bootstrap"
    assert convergence.interval_rule(table.assign(se_seed=0.5)) == "pooled"
    assert convergence.interval_rule(table.assign(se_seed=0.5, ci_low_a=20.0)) == "own seeds"


def test_a_reference_folder_missing_a_table_is_named(tmp_path):
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "claims.csv").write_text("id,verdict\n")
    with pytest.raises(FileNotFoundError, match="half lacks comparisons.csv, training.csv"):
        read_reference(tmp_path / "half")


def legended(paths: pd.DataFrame) -> pd.DataFrame:
    """Paths with a legend entry per line (convergence.legend_paths words them for a reader)."""
    return paths.assign(series=paths.comparison + " in " + paths.study)


def test_the_figure_draws_one_panel_per_claim(reference, tmp_path):
    here = pd.DataFrame(comparison_rows("d3_dk128", {"final": 12.0}))
    fig = figure.draw(legended(convergence.effect_paths(here, [reference], EFFECTS)))
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["D3"]  # D1: no rows in either study
    assert [tick.get_text() for tick in visible[0].get_xticklabels()] == ["1", "2", "4", "final"]


def test_once_a_reference_trains_a_claim_the_figure_leaves_out_the_lone_points(reference):
    here = pd.DataFrame(
        comparison_rows("d3_dk128", {"final": 12.0})
        + comparison_rows("d1", {"final": 0.3}, bucket=">60", metric="bleu_share")
    )
    paths = convergence.effect_paths(here, [reference], EFFECTS)
    assert set(paths.claim) == {"D1", "D3"}
    assert [ax.get_title() for ax in figure.draw(legended(paths)).axes if ax.get_visible()] == [
        "D3"
    ]
    alone = convergence.effect_paths(here, [], EFFECTS)  # no reference: one point a claim
    (note,) = [t.get_text() for ax in figure.draw(legended(alone)).axes for t in ax.texts]
    assert note.startswith("no effect to draw")  # a lone point is in the tables, not a panel


def test_the_section_says_which_verdicts_hold_and_renders(reference, tmp_path):
    """A claim whose converged verdict differs is named with the reference's reason; the
    section renders the verdict table and the moved sentence, and the appendix every effect's
    point (this build's at its budget). The abstract says where a moved verdict moved (the
    paper branch's abstract, which replaced 'those on D3 move'): the verdict it moved to, and
    the reference's corpus where its provenance records one (this reference's does not: its
    table cell reads '--')."""
    from softlookup.report import render
    from softlookup.report.facts import common
    from softlookup.report.study import load

    results = tmp_path / "results"
    (results / "tables").mkdir(parents=True)
    (results / "claims").mkdir()
    pd.DataFrame(comparison_rows("d3_dk128", {"final": 12.0})).to_csv(
        results / "tables" / "comparisons.csv", index=False
    )
    pd.DataFrame(
        [
            {"id": "D3", "verdict": "reproduced", "short": "scaling matters"},
            {"id": "D1", "verdict": "reproduced", "short": "length"},
        ]
    ).to_csv(results / "claims" / "claims.csv", index=False)
    config = {
        "train": {"epochs": 2, "patience": 2},
        "convergence": {"references": [str(tmp_path / "converged_scale")], "effects": EFFECTS},
    }
    config_file = tmp_path / "config.json"
    config_file.write_text(json.dumps(config))
    study = load(results, config_file)
    facts = convergence.section(study)
    assert [row["claim"] for row in facts["moved"]] == ["D3"] and facts["not_run"] == ["D1"]
    assert facts["references"][0]["hit_cap"] == 1 and facts["references"][0]["commit"] == "abcdef1"
    text = (
        render.environment(ROOT / "paper" / "sections")
        .get_template("convergence.tex")
        .render(**common(study, [], []), **facts)
    )
    assert r"moves from \emph{reproduced} to \emph{partly}" in text
    assert "(1 of 2 " in text and r"Appendix~\ref{app:convergence}" in text
    floor = tmp_path / "converged_scale" / "claims.csv"  # the same claim undecided at a floor
    as_it_was = floor.read_text()
    claims = pd.read_csv(floor, dtype=str, keep_default_na=False)
    claims.loc[claims.id == "D3", ["verdict", "reason"]] = ["inconclusive", "floor"]
    claims.to_csv(floor, index=False)
    at_floor = (
        render.environment(ROOT / "paper" / "sections")
        .get_template("convergence.tex")
        .render(**common(study, [], []), **convergence.section(load(results, config_file)))
    )  # a study reads its files once: the changed reference is a new study
    assert "(a model it compares is under the BLEU floor)" in at_floor and "of 2 " not in at_floor
    floor.write_text(as_it_was)
    details = (
        render.environment(ROOT / "paper" / "sections")
        .get_template("convergence_details.tex")
        .render(**common(study, [], []), **facts)
    )
    assert r"Table~\ref{tab:convergence-paths}" in details  # the references' table is there too
    appendix = (
        render.environment(ROOT / "paper" / "sections")
        .get_template("paths.tex")
        .render(**common(study, [], []), **convergence.paths_appendix(study))
    )
    assert r"\label{app:paths}" in appendix and "main study & 2 & +12.00" in appendix
    assert r"\texttt{abcdef1} & 2 (2) & 4 & 10, 2 & 1 & 1, 2, final\\" in details
    assert "no run in them was still improving by more than 1\\% of its validation loss" in text
    from softlookup.report.facts import back, front

    facts = {**back.threats(study), "still_improving": 3, "runs": 4}  # 2-epoch runs still improving
    threats = " ".join(
        render.environment(ROOT / "paper" / "sections")
        .get_template("threats.tex")
        .render(**common(study, [], []), **facts)
        .split()
    )
    assert (
        "D3 moves in at least one reference (Table~\\ref{tab:convergence}): at this budget its"
        " verdict is not the verdict of longer training there."
    ) in threats
    assert "No reference trains the variants of D1, judged at this budget only." in threats
    assert "keeps its verdict" not in threats and "keep their verdicts" not in threats
    discussion = " ".join(
        render.environment(ROOT / "paper" / "sections")
        .get_template("discussion.tex")
        .render(**common(study, [], []), **back.discussion(study))
        .split()
    )
    assert "What would settle" not in discussion  # no heading over nothing

    unconverged = convergence.section(study)
    unconverged["references"][0]["still_improving"] = ["a-s1"]
    text = " ".join(
        render.environment(ROOT / "paper" / "sections")
        .get_template("convergence.tex")
        .render(**common(study, [], []), **unconverged)
        .split()
    )
    assert (
        "1 run was still improving by more than 1\\% of validation loss at the last epoch, so"
        " not converged."
    ) in text and "no run in them" not in text

    def abstract_of(study, **convergence):
        summary = front.abstract(study)
        summary["convergence"] |= convergence
        text = " ".join(
            render.environment(ROOT / "paper" / "sections")
            .get_template("abstract.tex")
            .render(**common(study, [], []), **summary)
            .split()
        )
        return summary["convergence"], text

    budget, abstract = abstract_of(study)
    assert [
        (row["claim"], row["verdict"], row["converged"], row["corpus"]) for row in budget["moved"]
    ] == [("D3", "reproduced", "partly", "")]
    assert budget["held"] == [] and budget["not_run"] == ["D1"]
    # this reference's comparisons have no seed columns: judged by an earlier rule
    assert "no verdict on trained translators holds, provisionally: these longer runs" in abstract
    own_seeds = tmp_path / "converged_scale" / "comparisons.csv"
    pd.read_csv(own_seeds).assign(se_seed=0.5, ci_low_a=20.0).to_csv(own_seeds, index=False)
    _, abstract = abstract_of(load(results, config_file))
    assert "no verdict on trained translators holds." in abstract
    for held, moved, says in (
        (
            ["D2", "D3"],
            ["D1", "D5"],
            "the verdicts on D2 and D3 (scaling matters) hold and those on D1 (length) and D5"
            " change.",
        ),
        (
            ["D2"],
            ["D1"],
            "the verdict on D2 holds and the one on D1 (length) changes.",
        ),
        (
            ["D2"],
            ["D1", "D3", "D5"],
            "the verdict on D2 holds and those on D1 (length), D3 (scaling matters) and D5 change.",
        ),
    ):
        _, abstract = abstract_of(load(results, config_file), held=held, moved_claims=moved)
        # not "most verdicts hold" when half change; each claim with its short name
        assert says in abstract


def bucket_scores(variant, bleu_by_bucket, test_set, epoch="final"):
    return [
        {
            "run": f"{variant}-s{seed}",
            "variant": variant,
            "seed": seed,
            "status": "ok",
            "epoch": epoch,
            "test_set": test_set,
            "bucket": bucket,
            "metric": "bleu",
            "value": bleu + seed,
            "ci_low": bleu - 2,
            "ci_high": bleu + 4,
        }
        for bucket, bleu in bleu_by_bucket.items()
        for seed in (1, 2)
    ]


def test_the_length_curves_come_from_every_study_that_scores_d1(tmp_path):
    """Claim D1's curves: BLEU per bucket of the comparison's two systems, final models, seeds
    pooled, here and in a reference on its own test set; a reference without scores adds none."""
    from softlookup.report.study import load

    pair = {
        "comparison": "d1",
        "system_a": "none",
        "system_b": "additive",
        "bucket": "all",
        "metric": "bleu",
        "epoch": "final",
    }
    results = tmp_path / "results"
    (results / "tables").mkdir(parents=True)
    pd.DataFrame([{**pair, "test_set": "test_long"}]).to_csv(
        results / "tables" / "comparisons.csv", index=False
    )
    pd.DataFrame(
        bucket_scores("none", {"1-10": 10, ">60": 1}, "test_long")
        + bucket_scores("additive", {"1-10": 20, ">60": 5}, "test_long")
        + bucket_scores("additive", {"1-10": 99}, "test_long", epoch="1")
        + bucket_scores("other", {"1-10": 50}, "test_long")
    ).to_csv(results / "tables" / "scores.csv", index=False)
    claims, training = [{"id": "D1", "verdict": "partly"}], training_log("none-s1", [3.0], cap=1)
    write_reference(tmp_path / "long", claims, [{**pair, "test_set": "test_europarl"}], training)
    pd.DataFrame(bucket_scores("additive", {"1-10": 30, ">60": 12}, "test_europarl")).to_csv(
        tmp_path / "long" / "scores.csv", index=False
    )
    long = read_reference(tmp_path / "long")
    bare = write_reference(tmp_path / "bare", claims, [{**pair, "test_set": "test_long"}], training)
    config = {
        "convergence": {
            "effects": {"D1": [{"comparison": "d1", "bucket": ">60", "metric": "bleu_share"}]}
        }
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    curves = convergence.length_curves(load(results, tmp_path / "config.json"), [long, bare])
    here = curves[curves.study == "main study"].set_index(["variant", "bucket"])
    assert here.loc[("additive", "1-10"), "value"] == 21.5  # seeds pooled, final models only
    # the mean's interval (not the union of the runs'): the seeds' spread, 0.25 on 1 df, and one
    # run's sentence variance, (6 / 3.92)^2, on Student's t with calibrated df, cut at BLEU 0
    from softlookup import intervals

    sentence, seed = (6 / (2 * intervals.critical(math.inf))) ** 2, 0.25
    df = intervals.calibrated_df([(seed, 1)], sentence)
    expected = intervals.within(intervals.interval(2.5, math.sqrt(seed + sentence), df), (0, 100))
    assert here.loc[("none", ">60"), ["ci_low", "ci_high"]].tolist() == pytest.approx(expected)
    assert "other" not in set(curves.variant) and set(curves.study) == {"main study", "long"}
    europarl = curves[curves.study == "long"]
    assert set(europarl.test_set) == {"test_europarl"}
    assert europarl.set_index("bucket").value.to_dict() == {"1-10": 31.5, ">60": 13.5}


def test_the_default_config_reads_committed_references_that_decide_its_claims():
    """Every reference config.yaml names is committed, complete, and decides some D claim: the
    converged study's recurrent part and the long-sentence study on Europarl both decide D1, its
    scale part D3 and its heads part D5."""
    import yaml

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    references = [read_reference(ROOT / folder) for folder in config["convergence"]["references"]]
    deciding = {
        ref.name: [
            claim
            for claim in config["convergence"]["effects"]
            if convergence.deciding_verdicts(claim, [ref])
        ]
        for ref in references
    }
    assert deciding["converged_recurrent"] == ["D1", "D2"] and deciding["long"] == ["D1"]
    assert deciding["converged_scale"] == ["D3"] and deciding["converged_heads"] == ["D5"]
    long = next(ref for ref in references if ref.name == "long")
    assert set(long.scores.test_set) >= {"test_europarl"} and long.commit


def seed_part(tmp_path, name, seed_deltas, se_sentence):
    """A reference folder of one part of a study: the comparison d5 on the given seeds."""
    mean = sum(seed_deltas.values()) / len(seed_deltas)
    row = {
        **comparison_rows("d5", {"final": mean})[0],
        "seeds": len(seed_deltas),
        "seed_deltas": json.dumps(seed_deltas),
        "se_sentence": se_sentence,
    }
    return write_reference(
        tmp_path / name,
        claims=[{"id": "D5", "verdict": "partly"}],
        comparisons=[row],
        training=training_log("a-s1", [3.0], cap=1),
    )


def test_a_study_trained_in_parts_reads_all_its_seeds_together(tmp_path):
    """Five per-seed differences from two parts: their mean, a t interval on 4 df widened by the
    shared sentence part (Welch-Satterthwaite: df above 4), each part's own row kept."""
    import math

    from scipy import stats

    first = seed_part(tmp_path, "converged_heads", {"1": 0.2, "2": 0.8}, math.nan)
    second = seed_part(tmp_path, "converged_heads_seeds", {"3": 1.0, "4": -0.4, "5": 0.9}, 0.1)
    together = convergence.seeds_together([first, second], "d5")
    deltas = [0.2, 0.8, 1.0, -0.4, 0.9]
    seed_variance = pd.Series(deltas).var() / 5
    assert together["seeds"] == 5 and together["delta"] == pytest.approx(sum(deltas) / 5)
    assert 4 < together["df"] < math.inf
    half = stats.t.ppf(0.975, together["df"]) * math.sqrt(seed_variance + 0.01)
    assert together["ci_high"] - together["delta"] == pytest.approx(half)
    assert [part["seeds"] for part in together["parts"]] == [[1, 2], [3, 4, 5]]
    assert convergence.seeds_together([first, second], "absent") is None
    again = seed_part(tmp_path, "again", {"2": 0.1, "6": 0.3}, 0.1)
    with pytest.raises(ValueError, match=r"again repeats seeds \[2\]"):
        convergence.seeds_together([first, again], "d5")


def test_a_comparison_label_typesets_a_key_width_as_math(tmp_path):
    """A variant only a reference trains is labelled from its name; its key width reaches the
    LaTeX as math ('$d_k = 128$'), not escaped into the text as '\\$d\\_k = 128\\$'."""
    from softlookup.report import render
    from softlookup.report.study import load

    (tmp_path / "results").mkdir()
    config = {
        "models": {"sweep_transformer": {"arch": "transformer", "enc_layers": 1, "dec_layers": 1}},
        "comparisons": {
            "d3_dk128": {
                "a": "sweep_transformer.d_k-128.scale-false",
                "b": "sweep_transformer.d_k-128",
            }
        },
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    study = load(tmp_path / "results", tmp_path / "config.json")
    printed = render.finalize(convergence.comparison_label(study, "d3_dk128"))
    assert "$d_k = 128$ vs " in printed and printed.endswith("$d_k = 128$, unscaled")
    assert r"\$" not in printed and r"\_" not in printed
    assert (
        render.finalize(convergence.comparison_label(study, "not_configured")) == r"not configured"
    )
