"""The environment macros of the paper (one set): versions, device, commit, from provenance.

\\EnvPython, \\EnvTorch, \\EnvTriton, \\EnvSacrebleu, \\EnvSentencepiece, \\EnvSnakemake,
\\EnvDevice, \\EnvDeviceName, \\EnvThreads (of the training runs: a run's meta.json), and
\\EnvCommit, \\EnvDirty (the code that built the report).
"""

from __future__ import annotations

from ..provenance import git_state
from .latex import escape, macro_name

KEYS = (
    "python",
    "torch",
    "triton",
    "sacrebleu",
    "sentencepiece",
    "snakemake",
    "device",
    "device_name",
    "threads",
)


def run_environment(metas: list[dict]) -> dict:
    """The environment recorded by the first run that has one ({} when none does)."""
    for meta in metas:
        if isinstance(meta.get("environment"), dict):
            return meta["environment"]
    return {}


def environment_macros(env: dict) -> dict[str, str]:
    """Env<Key> for every key; a key a run did not record reads 'unrecorded'."""
    macros = {macro_name("env", key): escape(env.get(key, "unrecorded")) for key in KEYS}
    commit, dirty = git_state()
    macros["EnvCommit"] = escape(commit[:12])
    macros["EnvDirty"] = "with uncommitted changes" if dirty else "clean"
    return macros
