"""Writing a file whole or not at all: every atomic writer of the package goes through here.

`atomic_file(path)` gives a partial file beside `path` (`.<name>.partial`) to write, then renames
it over `path`, so a kill never leaves half a file and the last good file survives a failure.
A failed write removes the partial file and raises `WriteError` in one line: which file, and the
OS reason (no space left on device, read-only file system, permission denied). A writer that
hides the OS error (torch's own file writer says "unexpected pos ...") is judged by asking the
file system.

`atomic_directory(path)` does the same for a folder of files (a committed reference): it gives a
temporary folder beside `path` (`.<name>.tmp-XXXX`) to fill, then swaps it in by renames (the old
folder moved aside to `.<name>.old-XXXX`, the new one renamed in, the old one removed). A failure
or Ctrl-C while filling removes the temporary folder and leaves the old one as it was; leftovers of
a run killed outright are cleaned by the next one.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# below this many free bytes a failed write is put down to a full disk
FULL_DISK_BYTES = 1 << 20
# OS errors that mean the file system refused the write (others, a lost connection or a source
# file that cannot be read, say, are the writer's own and pass through as they are)
WRITE_ERRNOS = {
    errno.ENOSPC,
    errno.EDQUOT,
    errno.EFBIG,
    errno.EROFS,
    errno.EACCES,
    errno.EPERM,
    errno.EIO,
}


class WriteError(OSError):
    """A file that could not be written, with the OS reason, in one line."""


def failure_reason(error: BaseException, directory: Path) -> tuple[int | None, str]:
    """(errno, reason in words) of a failed write into `directory`: the OS error's own, else
    what the file system says now (read-only, not writable, full)."""
    if isinstance(error, OSError) and error.errno:
        return error.errno, os.strerror(error.errno)
    try:
        disk = os.statvfs(directory)
    except OSError:
        disk = None
    if disk is not None and disk.f_flag & os.ST_RDONLY:
        return errno.EROFS, os.strerror(errno.EROFS)
    if not os.access(directory, os.W_OK):
        return errno.EACCES, os.strerror(errno.EACCES)
    if disk is not None and disk.f_bavail * disk.f_frsize < FULL_DISK_BYTES:
        return errno.ENOSPC, os.strerror(errno.ENOSPC)
    first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return None, first_line


@contextmanager
def atomic_file(path: Path, hiding: tuple[type[Exception], ...] = ()) -> Iterator[Path]:
    """Yield the partial file to write in place of `path`; on success it becomes `path`.

    `hiding`: the errors of a writer that hides the OS error behind its own (torch.save's
    RuntimeError); they are judged by asking the file system."""
    path = Path(path)
    partial = path.with_name(f".{path.name}.partial")
    try:
        yield partial
        os.replace(partial, path)
    except (OSError, *hiding) as error:
        if isinstance(error, OSError) and (
            error.errno not in WRITE_ERRNOS or error.filename not in (None, str(partial), partial)
        ):  # another file's
            partial.unlink(missing_ok=True)
            raise
        code, reason = failure_reason(error, path.parent)  # before the partial file frees space
        partial.unlink(missing_ok=True)
        failure = WriteError(f"cannot write {path}: {reason} (partial file removed)")
        failure.errno = code
        raise failure from error
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def leftover_folders(path: Path) -> list[Path]:
    """The temporary and set-aside folders an interrupted `atomic_directory(path)` left beside it."""
    return sorted(
        [*path.parent.glob(f".{path.name}.tmp-*"), *path.parent.glob(f".{path.name}.old-*")]
    )


def clean_leftovers(path: Path) -> None:
    """Remove what an interrupted `atomic_directory(path)` left; a folder set aside just before
    its replacement was renamed in (the one moment without `path`) is put back first."""
    set_aside = sorted(path.parent.glob(f".{path.name}.old-*"))
    if set_aside and not path.exists():
        os.rename(set_aside.pop(), path)
    for folder in leftover_folders(path):
        shutil.rmtree(folder)


@contextmanager
def atomic_directory(path: Path) -> Iterator[Path]:
    """Yield an empty temporary folder beside `path` to fill; on success it replaces `path`
    whole. On any failure (Ctrl-C included) the temporary folder is removed and `path` is left as
    it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(path)
    fresh = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-", dir=path.parent))
    try:
        yield fresh
        fresh.chmod(0o755)  # mkdtemp's folder is the owner's only; a reference is everyone's
        if path.exists():
            old = path.with_name(f".{path.name}.old-{os.getpid()}")
            os.rename(path, old)
            os.rename(fresh, path)
            shutil.rmtree(old)
        else:
            os.rename(fresh, path)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
