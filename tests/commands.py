"""The project's commands as a user runs them, started by a test: Snakemake, make, pytest
itself, and the scripts of scripts/. Every test that reaches one of these (itself, through a helper or a fixture) is marked
`slow` by conftest.py, so the fast tier (`make test-fast`) never starts a process that runs for
minutes."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from .project import ROOT

VENV_BIN = Path(sys.executable).parent


def bare_environment(env: dict | None = None) -> dict:
    """The test session's environment as a user's shell has it with the venv not activated (no
    VIRTUAL_ENV, PATH without the venv), plus `env`."""
    bare = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    bare["PATH"] = "/usr/bin:/bin"
    return {**bare, **(env or {})}


def snakemake_command(*args: str, python: Path | None = None, cores: int = 1) -> list[str]:
    """The venv's snakemake (or `<python> -m snakemake`) with `args`, on `cores` cores."""
    launcher = [str(python), "-m", "snakemake"] if python else [str(VENV_BIN / "snakemake")]
    return [*launcher, "--cores", str(cores), *args]


def snakemake(
    workdir: Path,
    *args: str,
    env: dict | None = None,
    python: Path | None = None,
    cores: int = 1,
) -> subprocess.CompletedProcess:
    """The venv's snakemake (or `<python> -m snakemake`) in `workdir`, venv not activated: rules
    find the project's Python by themselves. `env`: variables set on top (the mirror, say)."""
    return subprocess.run(
        snakemake_command(*args, python=python, cores=cores),
        cwd=workdir,
        env=bare_environment(env),
        capture_output=True,
        text=True,
        check=False,
    )


def make(workdir: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`make -s <args>` in `workdir`, with the session's environment plus `env`."""
    return subprocess.run(
        ["make", "-s", *args],
        cwd=workdir,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )


def pytest_session(
    workdir: Path, *args: str, env: dict | None = None
) -> subprocess.CompletedProcess:
    """A pytest session of its own (no cache written) in `workdir`, with the session's
    environment plus `env`."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=workdir,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )


def script(name: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """scripts/<name> of the checkout with the session's environment plus `env` (ten minutes at
    most)."""
    return subprocess.run(
        [str(ROOT / "scripts" / name), *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def load_script(name: str) -> ModuleType:
    """scripts/<name>, a Python script, imported as a module in this process (no process
    started: its functions are unit-tested in the fast tier)."""
    path = ROOT / "scripts" / name
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stand_in_venv(venv: Path) -> Path:
    """A stand-in for .venv, already set up (make installs nothing): its python and snakemake
    are the ones running the tests. Scripts, not links: a linked interpreter looks for pyvenv.cfg
    beside the link and would run without this venv's packages."""
    (venv / "bin").mkdir(parents=True)
    for name, command in (("python", ""), ("snakemake", " -m snakemake")):
        (venv / "bin" / name).write_text(f'#!/bin/sh\nexec "{sys.executable}"{command} "$@"\n')
        (venv / "bin" / name).chmod(0o755)
    (venv / ".installed").touch()
    return venv
