"""The on-disk cache of built shared objects: a private folder, atomic entries named by their content hash.

NOTE: [native build cache] One C source becomes one shared object whose key is a hash of the
source, the compiler's version line, the flags and the CPU model (``-march=native`` code must
not be reused on another CPU). Entries live in ``DYNAMO_LITE_CACHE_DIR/native`` or else a
per-user folder (``$XDG_CACHE_HOME/dynamo_lite/native``, ``~/.cache/...``), so a second
process loads without compiling. Loading a shared object runs its code, so the cache is
trusted only as far as it is private:

- the folder is created ``0700``; one owned by another user, writable by group or others, or
  a symlink, is refused (a ``BuildError``: the graph stays on numpy, with one logged line);
- an entry is ``k_<key>-<sha256 of its bytes>.so``, built under a temporary name in the same
  folder, made ``0600`` and renamed into place (atomic, so no process sees a partial file;
  concurrent builders of one key each leave a complete, equally valid entry);
- before ``dlopen`` the entry must be a regular file owned by this user, not writable by
  group or others (else refused as above), and its bytes must hash to its name: a truncated
  or overwritten entry is deleted and rebuilt;
- temporary files of builds whose process is gone (killed mid-build) are removed once they
  are older than a minute.
"""
from __future__ import annotations

import hashlib
import logging
import os
import re
import stat
import time

from .build_errors import BuildError

log = logging.getLogger("dynamo_lite")

TEMP_PREFIX = ".tmp-"
# A temporary file is a dead build's once its process is gone and it is at least this old (seconds).
STALE_TEMP_SECONDS = 60.0
# Temporary files of older versions carry no pid: removed once older than any build may run.
LEGACY_TEMP = re.compile(r"^tmp[\w]+\.(c|so\.tmp)$")
LEGACY_TEMP_SECONDS = 3600.0
DIGEST_CHARS = 32


def cache_dir() -> str:
    """The directory of cached shared objects (``DYNAMO_LITE_CACHE_DIR`` overrides)."""
    root = os.environ.get("DYNAMO_LITE_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "dynamo_lite")
    return os.path.join(root, "native")


def _unsafe(st: os.stat_result, what: str, path: str) -> str | None:
    """Why a folder or file with this lstat may not be trusted, or None."""
    if st.st_uid != os.geteuid():
        return f"{what} {path} is owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{what} {path} is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def private_directory() -> str:
    """The cache folder, created ``0700`` if missing, once it is safe to load code from.

    Raises:
        BuildError: it cannot be created, or it is not private (NOTE: [native build cache]).
    """
    directory = cache_dir()
    try:
        os.makedirs(os.path.dirname(directory) or ".", exist_ok=True)
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass
        st = os.lstat(directory)
    except OSError as exc:
        raise BuildError(f"the native cache folder {directory} cannot be created: {exc}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise BuildError(f"the native cache folder {directory} is not a directory (a symlink or a file): refused")
    reason = _unsafe(st, "the native cache folder", directory)
    if reason is not None:
        raise BuildError(f"{reason}: refused, shared objects are loaded only from a private folder "
                         "(set DYNAMO_LITE_CACHE_DIR to a folder of your own, or chmod 700 it)")
    return directory


def _digest_of(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:DIGEST_CHARS]


def _entries(directory: str, key: str) -> list:
    prefix = f"k_{key}-"
    try:
        names = os.listdir(directory)
    except OSError as exc:
        raise BuildError(f"the native cache folder {directory} cannot be read: {exc}") from None
    return sorted(name for name in names if name.startswith(prefix) and name.endswith(".so"))


def verified_entry(directory: str, key: str) -> str | None:
    """The path of a sound cached object of ``key``, or None; damaged ones are deleted.

    Raises:
        BuildError: an entry is owned by someone else or writable by others (refused, kept).
    """
    for name in _entries(directory, key):
        path = os.path.join(directory, name)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(st.st_mode):
            raise BuildError(f"the native cache entry {path} is not a regular file: refused")
        reason = _unsafe(st, "the native cache entry", path)
        if reason is not None:
            raise BuildError(f"{reason}: refused")
        try:
            sound = name[len(f"k_{key}-"):-3] == _digest_of(path)
        except OSError:
            sound = False
        if sound:
            return path
        log.warning("native cache entry %s is damaged (its bytes do not match its hash); removed, rebuilding", path)
        _remove(path)
    return None


def temporary_path(directory: str, suffix: str) -> str:
    """A fresh name for a build's temporary file, carrying this process's pid."""
    return os.path.join(directory, f"{TEMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}{suffix}")


def publish(directory: str, key: str, built: str) -> str:
    """Move the object built at ``built`` into the cache under its content hash; its path."""
    try:
        os.chmod(built, 0o600)
        path = os.path.join(directory, f"k_{key}-{_digest_of(built)}.so")
        os.replace(built, path)
    except OSError as exc:
        raise BuildError(f"the built object cannot be stored in {directory}: {exc}") from None
    return path


def remove_dead_temporaries(directory: str, now: float | None = None) -> int:
    """Delete temporary files of builds that died (pid gone, older than a minute); returns how many."""
    now = time.time() if now is None else now
    removed = 0
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    for name in names:
        path = os.path.join(directory, name)
        if name.startswith(TEMP_PREFIX):
            pid = name[len(TEMP_PREFIX):].split("-", 1)[0]
            stale, dead = STALE_TEMP_SECONDS, pid.isdigit() and not _alive(int(pid))
        elif LEGACY_TEMP.match(name):
            stale, dead = LEGACY_TEMP_SECONDS, True
        else:
            continue
        try:
            old = now - os.lstat(path).st_mtime >= stale
        except FileNotFoundError:
            continue
        if dead and old and _remove(path):
            removed += 1
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _remove(path: str) -> bool:
    try:
        os.unlink(path)
        return True
    except OSError:
        return False
