"""The history of the claims' thresholds (reference.thresholds) and its appendix
(report.facts.thresholds): the committed table is what git says, a threshold's commit is the one
that set its present value (a branch's, not the merge), a post-hoc threshold is re-read at -20% and
+20% of itself, and the appendix renders from a fixture."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from softlookup.paths import ROOT, THRESHOLD_HISTORY
from softlookup.reference import thresholds as history
from softlookup.report import render
from softlookup.report.facts import claims as claim_facts
from softlookup.report.facts import thresholds
from softlookup.report.study import load


def test_the_committed_history_is_what_git_says(tmp_path):
    if not history.is_full_history(ROOT):
        pytest.skip(
            "no whole git history here (a tarball or a shallow clone): nothing to regenerate"
        )
    regenerated = tmp_path / "threshold_history.csv"
    history.write(history.history(ROOT), regenerated)
    assert regenerated.read_text() == THRESHOLD_HISTORY.read_text(), (
        "config/threshold_history.csv is not what git says: run"
        " `python -m softlookup.reference.thresholds` and commit it"
    )


# --- the history, on a repository of its own ----------------------------------------------------


def claims_yaml(bar: float, floor: float | None = None, where: str = "longest") -> str:
    check = {
        "comparison": "d1_a_vs_b",
        "metric": "bleu",
        "bucket": where,
        "op": "above",
        "expected": bar,
        "label": "a vs b",
    }
    if floor is not None:
        check["floor"] = {"metric": "bleu", "bucket": "shortest", "below": floor}
    tolerance = {
        "probe": "p",
        "quantity": "q",
        "grid": {"col": ["1", "2"]},
        "expected": [1, 2],
        "tolerance": 0.001,
    }
    return json.dumps(
        {"claims": [{"id": "A1", "checks": [tolerance]}, {"id": "D1", "checks": [check]}]}
    )


def commit(repo: Path, files: dict[str, str], message: str, date: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "PATH": "/usr/bin:/bin"}
    run = lambda *args: subprocess.run(  # noqa: E731
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()
    run("add", "-A")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)
    return run("rev-parse", "HEAD")


def test_a_thresholds_commit_is_the_one_that_set_its_value(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    claims = "config/claims.yaml"
    first = commit(repo, {claims: claims_yaml(0.0)}, "claims", "2026-11-29T07:00:00Z")
    judged = commit(
        repo,
        {"results/reference/test/claims.csv": "id,verdict\nA1,pending\nD1,partly\n"},
        "a reference",
        "2026-11-29T19:00:00Z",
    )
    moved = commit(repo, {claims: claims_yaml(0.5)}, "D1's bar", "2026-12-01T13:00:00Z")
    subprocess.run(["git", "-C", str(repo), "checkout", "-qb", "side"], check=True)
    floored = commit(repo, {claims: claims_yaml(0.5, 5)}, "a floor", "2026-12-02T18:00:00Z")
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "main"], check=True)
    commit(repo, {"other.txt": "x"}, "elsewhere", "2026-12-02T19:00:00Z")
    subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "merge",
            "side",
        ],
        check=True,
        env={
            "GIT_COMMITTER_DATE": "2026-12-02T20:00:00Z",
            "GIT_AUTHOR_DATE": "2026-12-02T20:00:00Z",
            "PATH": "/usr/bin:/bin",
        },
    )
    rows = {(r["claim"], r["check"], r["key"]): r for r in history.history(repo, Path(claims))}
    assert set(rows) == {
        ("A1", 1, "tolerance"),
        ("A1", 2, "tolerance"),
        ("D1", 1, "bar"),
        ("D1", 1, "floor"),
    }
    tolerance, bar, floor = rows["A1", 2, "tolerance"], rows["D1", 1, "bar"], rows["D1", 1, "floor"]
    assert (tolerance["commit"], tolerance["results_then"]) == (first, "no")  # A1 stayed pending
    assert (bar["commit"], bar["date"], bar["value"]) == (moved, "2026-12-01T13:00:00Z", 0.5)
    assert (bar["results_then"], bar["reference"], bar["reference_commit"]) == (
        "yes",
        "test",
        judged,
    )
    assert (floor["commit"], floor["value"]) == (floored, 5)  # the branch's commit, not the merge
    # a check that starts measuring something else has its threshold set anew
    remeasured = commit(repo, {claims: claims_yaml(0.5, 5, "all")}, "bucket", "2026-12-03T00:00Z")
    rows = {(r["claim"], r["key"]): r for r in history.history(repo, Path(claims))}
    assert rows["D1", "bar"]["commit"] == rows["D1", "floor"]["commit"] == remeasured


# --- a fifth lower and higher, on hand-made checks ----------------------------------------------


def check(op: str, value: float, expected=None, allowed=None, low=None, high=None, **extra):
    return claim_facts.Check(
        check=1,
        label="x",
        status=extra.pop("status", "pass"),
        reason="",
        op=op,
        expected=expected,
        allowed=allowed,
        value=value,
        ci_low=low,
        ci_high=high,
        **extra,
    )


@pytest.mark.parametrize(
    ("made", "key", "readings"),
    [
        # D7's slope 0.66 [0.43, 0.88] above 0.5: a bar of 0.4 is cleared, 0.6 is not
        (
            check("above", 0.66, 0.5, low=0.43, high=0.88),
            "bar",
            ("pass", "inconclusive", "inconclusive"),
        ),
        # a number without an interval: which side of the moved bar it lies
        (check("below", 0.9, 1.0), "bar", ("fail", "pass", "pass")),
        # an equivalence within +-1: [-0.92, 0.85] is inside +-1 and +-1.2, not +-0.8
        (
            check("equivalent", 0.0, allowed=1.0, low=-0.92, high=0.85),
            "margin",
            ("fail", "pass", "pass"),
        ),
        (
            check("non_inferior", 0.5, allowed=1.0, low=-0.92, high=1.9),
            "margin",
            ("fail", "pass", "pass"),
        ),
        # an approx figure 0.0011 off: outside +-0.0008 and +-0.001, inside +-0.0012
        (check("approx", 2.0011, 2.0, allowed=0.001), "tolerance", ("fail", "fail", "pass")),
        (check("above", 0.3, 0.5, status="pending"), "bar", ("pending",) * 3),
    ],
)
def test_a_threshold_is_re_read_a_fifth_lower_and_higher(made, key, readings):
    assert tuple(thresholds.reread(made, key, f) for f in (0.8, 1.0, 1.2)) == readings


def test_a_floor_leaves_a_check_undecided_when_a_system_scores_below_it():
    made = check("above", 0.3, 0.0, low=0.1, high=0.5)
    floor = {"metric": "bleu", "bucket": "shortest", "below": 5, "scores": {"a": 4.5, "b": 20.0}}
    assert [thresholds.reread(made, "floor", f, floor) for f in (0.8, 1.0, 1.2)] == [
        "pass",
        "inconclusive",
        "inconclusive",
    ]
    # the floor at its value holds whatever the bar: a bar moved either way stays undecided
    assert {thresholds.reread(made, "bar", f, floor) for f in (0.8, 1.2)} == {"inconclusive"}


# --- the appendix, from a fixture ---------------------------------------------------------------


def fixture_results(results: Path) -> None:
    (results / "claims").mkdir(parents=True)
    (results / "tables").mkdir()
    pd.DataFrame(
        [
            {"id": "A1", "verdict": "reproduced", "short": "a"},
            {"id": "D1", "verdict": "inconclusive", "short": "d"},
        ]
    ).to_csv(results / "claims" / "claims.csv", index=False)
    facts = json.dumps({"comparison": "d1_a_vs_b", "test_set": "test"})
    rows = [
        {
            "claim_id": "A1",
            "check": n,
            "label": f"weight[q,{n}]",
            "op": "approx",
            "expected": n,
            "allowed": 0.001,
            "value": n,
            "status": "pass",
            "reason": "within_tolerance",
            "fmt": ".3f",
            "facts": "{}",
        }
        for n in (1, 2)
    ] + [
        {
            "claim_id": "D1",
            "check": 1,
            "label": "share kept on the longest inputs",
            "op": "above",
            "expected": 0.5,
            "value": 0.56,
            "ci_low": 0.52,
            "ci_high": 0.67,
            "status": "pass",
            "reason": "beyond_threshold",
            "fmt": ".2f",
            "facts": facts,
        },
    ]
    pd.DataFrame(rows).to_csv(results / "claims" / "checks.csv", index=False)
    pd.DataFrame(
        [
            {
                "comparison": "d1_a_vs_b",
                "test_set": "test",
                "metric": "bleu",
                "bucket": bucket,
                "epoch": "final",
                "system_a": "a",
                "system_b": "b",
                "mean_a": a,
                "mean_b": 20.0,
                "delta": 20.0 - a,
                "ci_low": 1.0,
                "ci_high": 2.0,
            }
            for bucket, a in (("1-10", 5.5), (">60", 2.0))
        ]
    ).to_csv(results / "tables" / "comparisons.csv", index=False)


HISTORY = pd.DataFrame(
    [
        {
            "claim": "A1",
            "check": n,
            "key": "tolerance",
            "value": 0.001,
            "commit": "a" * 40,
            "date": "2026-11-29T07:00:00Z",
            "results_then": "no",
            "reference": "",
            "reference_commit": "",
            "reference_date": "",
        }
        for n in (1, 2)
    ]
    + [
        {
            "claim": "D1",
            "check": 1,
            "key": key,
            "value": value,
            "commit": "b" * 40,
            "date": "2026-12-01T13:00:00Z",
            "results_then": "yes",
            "reference": "test",
            "reference_commit": "c" * 40,
            "reference_date": "2026-11-29T19:00:00Z",
        }
        for key, value in (("bar", 0.5), ("floor", 5))
    ]
)
FLOORS = {("D1", 1): {"metric": "bleu", "bucket": "shortest", "below": 5}}


def test_the_appendix_gives_each_threshold_and_re_reads_the_post_hoc_ones(tmp_path):
    fixture_results(tmp_path)
    found = thresholds.facts(load(tmp_path), HISTORY, FLOORS)
    assert (found["before"], found["after"], found["zero_after"]) == (1, 2, 0)
    first = found["rows"][0]
    assert (first["claim"], first["numbers"], len(first["checks"])) == ("A1", "1–2", 2)
    moved = {row["key"]: row for row in found["moved"]}
    assert [moved["bar"][k] for k in ("lower", "as_set", "higher")] == [
        "pass",
        "pass",
        "inconclusive",
    ]
    # the fixed vector's 5.5 BLEU on the shortest inputs is under a floor of 6, not of 4 or 5
    assert [moved["floor"][k] for k in ("lower", "as_set", "higher")] == [
        "pass",
        "pass",
        "inconclusive",
    ]
    assert not moved["bar"]["adjusted"]
    env = render.environment(ROOT / "paper" / "sections")
    env.globals.update(level=95)
    text = " ".join(env.get_template("thresholds.tex").render(found).split())
    assert r"A1 & Tolerance: 2 checks (1--2) & \ensuremath{\pm}0.001" in text
    assert r"\textbf{after} results of 2026-11-29 & 2026-12-01" in text
    assert "under 5 BLEU (shortest inputs)" in text and "_" not in text.split(r"\section")[1]


def test_without_a_history_the_appendix_says_so(tmp_path):
    fixture_results(tmp_path)
    found = thresholds.facts(load(tmp_path), pd.DataFrame(), FLOORS)
    assert found["rows"] == [] and found["moved"] == []
    env = render.environment(ROOT / "paper" / "sections")
    assert "was not found" in env.get_template("thresholds.tex").render(found)
