"""Sweep families, from the sweep points a config trains: which swept settings the paper reports
together, and which families get a figure. The rule files read this (figures.smk), so it imports
no table library.

A family is named by the paper section that reports it (FAMILIES) or, for a key no section
names, by the key. A family whose first key takes at least two swept values gets a figure (BLEU
against that key); the others are a table only.
"""

from __future__ import annotations

FAMILIES = {  # paper section -> the sweep keys it reports, the x axis of its figure first
    "scaling": ["d_k", "scale"],
    "heads": ["heads"],
    "masking": ["causal_mask", "padding_mask"],
}


def swept_values(points) -> dict[str, set]:
    """{key: {values}} over sweep points ({key: value} each: what a variant changes)."""
    found: dict[str, set] = {}
    for point in points:
        for key, value in point.items():
            found.setdefault(key, set()).add(str(value))
    return found


def family_keys(name: str, keys) -> list[str]:
    """The keys of family `name` that some sweep changes (a key of no section: itself)."""
    return [k for k in FAMILIES.get(name, [name]) if k in keys]


def other_keys(keys) -> list[str]:
    """Swept keys that no section's family names."""
    named = {k for family in FAMILIES.values() for k in family}
    return sorted(k for k in keys if k not in named)


def figure_families(points) -> list[str]:
    """The families drawn as a figure, from the sweep points of the variants a config trains:
    those whose first swept key takes two values or more."""
    keys = swept_values(points)
    names = [name for name in FAMILIES if family_keys(name, keys)] + other_keys(keys)
    return [name for name in names if len(keys[family_keys(name, keys)[0]]) >= 2]
