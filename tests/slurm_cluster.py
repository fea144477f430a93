"""A one-node SLURM cluster on localhost for the tests (Debian slurm-wlm + munge).

`local_slurm(root, gres=True)` writes /etc/slurm/slurm.conf (state, spool, logs under `root`;
the default path, because srun inside a job reads no other), starts munged (unless one runs
already), slurmctld and slurmd in the foreground as child processes, waits until the node is idle,
and yields the environment under which sbatch, squeue and scontrol talk to it. munged counts
as running only when it answers (`munge -n`): a socket left by a killed munged is replaced. On exit it stops
the daemons it started, by their process ids, and removes the config files it wrote.
`unavailable()` says why no cluster can be started here (binaries missing, not root, a SLURM
config already there), or None.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol")
MUNGE_SOCKET = Path("/run/munge/munge.socket.2")
MUNGE_KEY = Path("/etc/munge/munge.key")
CONF_DIR = Path("/etc/slurm")

MARK = "# written by softlookup tests/slurm_cluster.py (removed when the test ends)"
SLURM_CONF = (
    MARK
    + """
ClusterName=local
SlurmctldHost=localhost
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=600
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
{gres_types}
NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory} {node_gres} State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""
)


def unavailable() -> str | None:
    missing = [
        name
        for name in DAEMONS
        if shutil.which(name) is None and not Path("/usr/sbin", name).exists()
    ]
    if missing:
        return f"SLURM not installed ({', '.join(missing)} missing; .ci/run installs slurm-wlm)"
    if os.geteuid() != 0:
        return "a local SLURM cluster needs root (slurmd runs jobs as their user)"
    conf = CONF_DIR / "slurm.conf"
    if conf.exists() and not conf.read_text().startswith(MARK):
        return f"{CONF_DIR}/slurm.conf exists: this machine has a SLURM of its own, left alone"
    return None


def _daemon(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


def _memory_mb() -> int:
    total_kb = int(Path("/proc/meminfo").read_text().split()[1])
    return int(total_kb / 1024 * 0.8)


@contextlib.contextmanager
def local_slurm(root: Path, *, gres: bool = True, cpus: int | None = None):
    root.mkdir(parents=True, exist_ok=True)
    for sub in ("state", "spool"):
        (root / sub).mkdir(exist_ok=True)
    CONF_DIR.mkdir(parents=True, exist_ok=True)
    conf = CONF_DIR / "slurm.conf"
    written = [conf]
    conf.write_text(
        SLURM_CONF.format(
            root=root,
            ctld_port=16817,
            slurmd_port=16818,
            cpus=cpus or os.cpu_count(),
            memory=_memory_mb(),
            gres_types="GresTypes=gpu" if gres else "",
            node_gres="Gres=gpu:1" if gres else "",
        )
    )
    if gres and not (CONF_DIR / "gres.conf").exists():
        (CONF_DIR / "gres.conf").write_text("Name=gpu File=/dev/null\n")
        written.append(CONF_DIR / "gres.conf")
    env = {**os.environ, "SLURM_CONF": str(conf)}
    started: list[subprocess.Popen] = []
    logs = []

    def start(*command: str) -> None:
        daemon = next(part for part in command if part.endswith(("munged", "slurmctld", "slurmd")))
        log = open(root / f"{Path(daemon).name}.out", "w")  # noqa: SIM115 (closed on exit)
        logs.append(log)
        started.append(
            subprocess.Popen(
                command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        )

    try:
        if not _munge_answers():
            _prepare_munge()
            # --force: a socket or lock left by a munged that was killed is replaced
            start("runuser", "-u", "munge", "--", _daemon("munged"), "-F", "--force")
            _wait(_munge_answers, 20, "munged", lambda: _tails(root))
        start(_daemon("slurmctld"), "-D", "-i", "-f", str(conf))
        time.sleep(2)
        start(_daemon("slurmd"), "-D", "-N", "localhost", "-f", str(conf))
        _wait(
            lambda: _node_state(env) in ("idle", "mixed", "allocated"),
            120,
            "slurmd",
            lambda: f"(node state {_node_state(env)!r})\n{_tails(root)}",
        )
        yield env
    finally:
        # jobs still queued or running (a failed or interrupted test): cancel them while slurmd
        # can still stop their steps
        queued = [
            job["JobId"] for job in jobs(env) if job.get("JobState") in ("PENDING", "RUNNING")
        ]
        if queued:
            subprocess.run(["scancel", *queued], env=env, check=False)
            _wait(
                lambda: (
                    not any(job.get("JobState") in ("RUNNING", "COMPLETING") for job in jobs(env))
                ),
                30,
                "job cancellation",
                raise_error=False,
            )
        for process in reversed(started):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(started):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        for log in logs:
            log.close()
        for path in written:
            path.unlink(missing_ok=True)


def _prepare_munge() -> None:
    """A key and the folders munged needs, owned by munge (a fresh install may lack them)."""
    if not MUNGE_KEY.exists():
        subprocess.run([_daemon("mungekey"), "--create", "--keyfile", str(MUNGE_KEY)], check=True)
        shutil.chown(MUNGE_KEY, "munge", "munge")
    for folder in (MUNGE_SOCKET.parent, Path("/var/log/munge"), Path("/var/lib/munge")):
        folder.mkdir(parents=True, exist_ok=True)
        shutil.chown(folder, "munge", "munge")


def _munge_answers() -> bool:
    try:
        return (
            subprocess.run(
                [shutil.which("munge") or "/usr/bin/munge", "-n"],
                capture_output=True,
                check=False,
                timeout=10,
            ).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return False


def _tails(root: Path, lines: int = 8) -> str:
    """The last lines of every daemon log under `root`, for an error that says why."""
    parts = []
    for log in sorted([*root.glob("*.log"), *root.glob("*.out")]):
        text = log.read_text(errors="replace").splitlines()[-lines:]
        parts.append(f"--- {log}\n" + "\n".join(line.strip()[:300] for line in text))
    return "\n".join(parts)


def _node_state(env: dict) -> str:
    try:
        result = subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%T"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=15,
        )
    except subprocess.TimeoutExpired:
        return ""
    return result.stdout.strip().rstrip("*~#")


def _wait(ready, seconds: float, what: str, detail=lambda: "", raise_error=True) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.5)
    if raise_error:
        raise RuntimeError(f"{what} did not come up within {seconds:.0f} s {detail()}")


def jobs(env: dict) -> list[dict]:
    """Every job slurmctld still remembers (MinJobAge=600): id, state, comment, TRES."""
    result = subprocess.run(
        ["scontrol", "-o", "show", "job"], env=env, capture_output=True, text=True, check=False
    )
    found = []
    for line in result.stdout.splitlines():
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        if "JobId" in fields:
            found.append(fields)
    return found
