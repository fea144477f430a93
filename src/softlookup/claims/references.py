"""What config/claims.yaml names that no config defines: a misspelt comparison, test set or probe
stops the workflow before any job, naming the claim, the check and the key.

A name counts as defined when the merged config or any config of the project (the `*.yaml`
beside claims.yaml) defines it, or, for a probe, when the probes' registry (`PROBES`) holds it.
So a comparison that this config removes (`comparisons: {d2_dot_vs_additive: null}`) or does not
train is no error: its check stays pending in the ledger. A family `d3_scaled_vs_unscaled_dk{x}`
is defined when some comparison matches it; and a family that pairs one variant with the points
of a sweep must pair it with every point this config trains (config.sweep_gaps), so that a value
added to the sweep gets its paired test, not only its runs.

    check_claim_names(config, "config/claims.yaml", files=[...])  # the Snakefile, after check
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from ..config import ConfigError, read_config_file, sweep_gaps
from ..probes import PROBES
from .spec import ComparisonCheck, NumericCheck, load_claims


def defined_names(configs: list[dict]) -> dict[str, set[str]]:
    """{"comparison": ..., "test_set": ..., "probe": ...}: every name the configs define, removed
    (null) entries included; test sets from every corpus's splits, concatenations and joins."""
    comparisons, test_sets, splits, concat = set(), set(), set(), set()
    for config in configs:
        pairs = config.get("comparisons") or {}
        comparisons |= set(pairs)
        test_sets |= {
            pair["test_set"]
            for pair in pairs.values()
            if isinstance(pair, dict) and pair.get("test_set")
        }
        data = config.get("data") or {}
        corpora = [data, *((data.get("extra") or {}).values())]
        splits |= {
            name
            for corpus in corpora
            if isinstance(corpus, dict)
            for name in corpus.get("splits") or {}
        }
        concat |= set(data.get("concat") or [])
        test_sets |= set(data.get("joined_tests") or {})
        test_sets |= set((config.get("evaluate") or {}).get("test_sets") or [])
    test_sets |= splits | {f"{split}.concat{k}" for split in splits for k in concat}
    return {"comparison": comparisons, "test_set": test_sets, "probe": set(PROBES)}


def named(check) -> list[tuple[str, str]]:
    """(kind, name) of every comparison, test set and probe one check names."""
    names = []
    if isinstance(check, NumericCheck) and check.kind == "probe":
        names.append(("probe", check.name))
    if getattr(check, "comparison", None):
        names.append(("comparison", check.comparison))
    if isinstance(check, ComparisonCheck) and check.test_set:
        names.append(("test_set", check.test_set))
    return names


def is_defined(kind: str, name: str, defined: dict[str, set[str]]) -> bool:
    if "{x}" not in name:
        return name in defined[kind]
    family = re.compile(re.escape(name).replace(re.escape("{x}"), ".+"))
    return any(family.fullmatch(member) for member in defined[kind])


def undefined_claim_names(claims_path: Path, configs: list[dict]) -> list[str]:
    """One line per name a claim gives (key comparison, test_set or probe) that none of
    `configs` (nor PROBES) defines, with the closest defined names."""
    claims, _ = load_claims(claims_path)
    defined = defined_names(configs)
    problems = {}
    for claim in claims:
        for check in claim.checks:
            for kind, name in named(check):
                if is_defined(kind, name, defined) or (claim.id, kind, name) in problems:
                    continue  # a grid's cells name it once
                close = difflib.get_close_matches(name, sorted(defined[kind]), n=3)
                hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
                problems[claim.id, kind, name] = (
                    f"{claims_path}: claim {claim.id}, check {check.label!r}: {kind} {name!r} is"
                    f" defined by no config{hint}"
                )
    return list(problems.values())


def claimed_families(claims_path: Path) -> dict[str, str]:
    """Every family pattern (`d5_heads{x}_vs_heads1`) a check of the claims names -> its claim."""
    claims, _ = load_claims(claims_path)
    return {
        check.comparison: f"claim {claim.id}"
        for claim in claims
        for check in claim.checks
        if "{x}" in (getattr(check, "comparison", None) or "")
    }


def project_configs(claims_path: Path) -> list[dict]:
    """Every config file beside the claims file (config/*.yaml but claims.yaml)."""
    folder = Path(claims_path).parent
    return [
        read_config_file(path)
        for path in sorted(folder.glob("*.yaml"))
        if path.resolve() != Path(claims_path).resolve()
    ]


def check_claim_names(config: dict, claims_path: Path, files: list[str] = ()) -> None:
    """Stop with one line per name of `claims_path` that no config defines (ConfigError)."""
    configs = [config, *project_configs(claims_path), *map(read_config_file, files)]
    problems = undefined_claim_names(Path(claims_path), configs)
    problems += sweep_gaps(config, claimed_families(Path(claims_path)))
    if problems:
        raise ConfigError("\n".join(f"config: {line}" for line in problems))
