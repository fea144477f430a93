"""Test-session settings that must hold before any test module imports Triton, and before any
test starts a process; and the rule that puts a test in the slow tier.

The fast tier is `pytest -m "not slow"` (`make test-fast`): the unit tests, on the committed
fixture corpus (tests/data/corpora), without the mirror. A test is `slow` when it, a helper it
calls or a fixture it uses reaches one of SLOW_CALLS (a process that runs for minutes, the full
corpus mirror, a long simulation), when it runs the whole workflow (`workflow`, `slurm`), or when
its module is in SLOW_MODULES or itself in SLOW_TESTS (slow inside the package); nobody marks a
test where it is written."""

import inspect
import os
import types

import pytest
import torch

from softlookup.data.sources import MIRROR_ENV, export_mirror

from . import corpora

# Without CUDA, the Triton kernels run under Triton's CPU interpreter. Triton fixes
# interpreter-or-compiler when a kernel is first defined, so this is set for the whole session,
# before any module (the kernels, the benchmarks, the models) imports them.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
# `make test-fast` runs one pytest-xdist worker per core: one thread each, not two fighting
if "PYTEST_XDIST_WORKER" in os.environ:
    torch.set_num_threads(1)

# what makes a test slow, by qualified name: the functions that start a process running for
# minutes, read the full corpus mirror, or simulate for minutes
SLOW_CALLS = {
    "tests.commands.snakemake": "starts Snakemake",
    "tests.commands.snakemake_command": "starts Snakemake",
    "tests.commands.make": "starts make",
    "tests.commands.pytest_session": "starts pytest inside pytest",
    "tests.commands.script": "runs a script of scripts/ (the GPU check: minutes on CPU)",
    "softlookup.report.build.build": "runs latexmk",
    "tests.corpora.mirror": "reads the full corpus mirror (../shared/corpora)",
    "softlookup.evaluate.coverage.coverage": "simulates a thousand studies per seed count",
    "tests.test_kernels_compile.run_uninterpreted": "starts a Python with Triton's compiler",
}
# modules whose every test is slow, and tests slow inside the package, for a reason no call names
SLOW_MODULES = {
    "test_slurm": "runs the workflow on a live SLURM cluster",
}
SLOW_TESTS = {
    "test_train.py::test_a_compiled_gru_decoder_step_trains_like_the_eager_one": (
        "torch.compile builds its C++ with g++ (minutes)"
    ),
    "test_bench_profile.py::test_a_compiled_copy_trains_like_the_eager_model_and_is_timed_beside_it": (
        "torch.compile builds its C++ with g++ (minutes)"
    ),
}


def pytest_configure(config):
    """A relative $SOFTLOOKUP_MIRROR (the README's ../shared/corpora) means the directory pytest
    was started in (`make test`'s: the checkout, where make has joined it already). Resolved
    once, here: every test, and every Snakemake a test starts in a temporary directory, gets the
    absolute path; without the variable, ../shared/corpora when it is there."""
    if (
        not export_mirror(None, config.invocation_params.dir)
        and (corpora.DEFAULT_MIRROR / "multi30k").is_dir()
    ):
        os.environ[MIRROR_ENV] = str(corpora.DEFAULT_MIRROR)


def code_objects(code: types.CodeType):
    """`code` and the code of every function, lambda and comprehension defined inside it."""
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from code_objects(constant)


def called(function) -> list:
    """What `function` names from its module (or through a module it names: `build.build`)."""
    names = {name for code in code_objects(function.__code__) for name in code.co_names}
    found = []
    for name in names:
        value = function.__globals__.get(name)
        if inspect.ismodule(value) and value.__name__.startswith(("tests.", "softlookup.")):
            found += [getattr(value, attr) for attr in names if hasattr(value, attr)]
        elif value is not None:
            found.append(value)
    return found


def slow_reason(function, seen: set) -> str | None:
    """Why `function` is slow: a SLOW_CALLS entry it reaches, directly or through the test
    helpers it calls; None when it reaches none."""
    function = inspect.unwrap(function)
    if function in seen or not inspect.isfunction(function):
        return None
    seen.add(function)
    for value in called(function):
        if not callable(value):
            continue
        module = getattr(value, "__module__", None) or ""
        name = f"{module}.{getattr(value, '__qualname__', '')}"
        if name in SLOW_CALLS:
            return SLOW_CALLS[name]
        if module.startswith("tests."):
            reason = slow_reason(value, seen)
            if reason:
                return reason
    return None


def item_slow_reason(item) -> str | None:
    """Why a collected test is slow (its module, its name, its marker, or what it or one of its
    fixtures reaches); None for a test of the fast tier."""
    module = item.module.__name__.rsplit(".", 1)[-1]
    if module in SLOW_MODULES:
        return SLOW_MODULES[module]
    if f"{module}.py::{item.originalname}" in SLOW_TESTS:
        return SLOW_TESTS[f"{module}.py::{item.originalname}"]
    if item.get_closest_marker("slurm") or item.get_closest_marker("workflow"):
        return "runs the whole workflow"
    seen: set = set()
    fixtures = [
        definition.func
        for name in item.fixturenames
        for definition in item._fixtureinfo.name2fixturedefs.get(name, ())
    ]
    for function in [item.function, *fixtures]:
        reason = slow_reason(function, seen)
        if reason:
            return reason
    return None


def pytest_collection_modifyitems(config, items):
    for item in items:
        reason = item_slow_reason(item)
        if reason:
            item.add_marker(pytest.mark.slow(reason=reason))
