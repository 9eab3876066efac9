"""List a corpus folder: every file in it, and every entry that cannot be listed or read, with why.

``Path.rglob`` silently skips what it cannot use: a sub-folder it may not list, a dangling or looping
symlink, a folder reached through a symlink. Here each of those is either read or returned as a
:class:`Problem` that ingest records as a rejection (and the corpus hash includes), so no report
vanishes unseen. Folder symlinks are followed once per real folder: real paths are walked first, so a
link to a folder already read (a loop back to a parent, or a second view) is a problem, not a re-read.
"""
from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from fincprg.io import update_hash


@dataclass(frozen=True)
class Problem:
    """An entry of the corpus folder that was not read: ``reason`` is a rejection reason code."""

    path: Path
    reason: str  # "unreadable" or "symlink_loop"
    why: str  # what is wrong and how to fix it
    folder: bool = False  # a folder (its files are all unread); else a file entry, or a link of unknown kind


@dataclass
class Walk:
    files: list[Path] = field(default_factory=list)  # non-hidden regular files, sorted
    problems: list[Problem] = field(default_factory=list)


def _why(err: OSError) -> str:
    return err.strerror or str(err)


def _broken(path: Path, err: OSError) -> Problem:
    """An entry whose target cannot be reached (its kind is unknown, so it may have been a folder)."""
    if not path.is_symlink():
        return Problem(path, "unreadable", f"cannot read it ({_why(err)}); check its permissions")
    if err.errno == errno.ELOOP:
        return Problem(path, "unreadable", "a symlink loop (it leads back to itself); point it at the real file "
                                           "or remove it")
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    if err.errno == errno.ENOENT:
        return Problem(path, "unreadable", f"a dangling symlink (its target {target} does not exist); restore the "
                                           "target or remove the link")
    return Problem(path, "unreadable", f"a symlink whose target {target} cannot be reached ({_why(err)})")


def walk(root: Path) -> Walk:
    """Every non-hidden regular file under ``root`` and every entry that could not be used."""
    out = Walk()
    seen: dict[tuple[int, int], Path] = {}  # (device, inode) of each folder walked -> the path it was read at
    st = root.stat()
    seen[(st.st_dev, st.st_ino)] = root
    links: list[Path] = []
    stack = [root]
    while stack or links:
        if not stack:  # every real folder is done: now the folders reached only through a symlink
            link = links.pop(0)
            try:
                st = link.stat()
            except OSError as e:  # changed since it was listed
                out.problems.append(_broken(link, e))
                continue
            first = seen.get((st.st_dev, st.st_ino))
            if first is not None:
                inside = link.parent == first or first in link.parents
                out.problems.append(Problem(link, "symlink_loop", (
                    f"a folder symlink back to {first}, which it is inside of" if inside else
                    f"a folder symlink to {first}, already read there") + "; its files are read once, at that path",
                    folder=True))
                continue
            seen[(st.st_dev, st.st_ino)] = link
            stack.append(link)
            continue
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as e:
            out.problems.append(Problem(folder, "unreadable", f"cannot list this folder ({_why(e)}), so none of "
                                        "its files is read; check its permissions (chmod +rx)", folder=True))
            continue
        for entry in entries:
            path = Path(entry.path)
            hidden = entry.name.startswith(".")  # .DS_Store, editor swap and lock files are not reports
            try:
                st = entry.stat()  # follows symlinks
            except OSError as e:
                if not hidden:
                    out.problems.append(_broken(path, e))
                continue
            if stat.S_ISDIR(st.st_mode):
                if entry.is_symlink():
                    links.append(path)
                else:
                    seen[(st.st_dev, st.st_ino)] = path
                    stack.append(path)
            elif hidden:
                continue
            elif stat.S_ISREG(st.st_mode):
                out.files.append(path)
            else:  # reading a pipe would block the build; a device or socket holds no report
                out.problems.append(Problem(path, "unreadable", "not a regular file (a pipe, socket or device); "
                                                                "copy the data into a file"))
    out.files.sort()
    out.problems.sort(key=lambda p: p.path)
    return out


def corpus_hash(corpus: Path) -> str:
    """Hash of the corpus bytes (the ingest spec's ``source_hash``; the runner has checked that it exists).

    A file or folder that cannot be read is hashed by its name and error, not raised: ingest records it
    as a rejection and reads the rest, and the hash changes once it can be read."""
    found = walk(corpus) if corpus.is_dir() else None
    files, root = (found.files, corpus) if found else ([corpus], corpus.parent)
    h = hashlib.sha256()
    update_hash(h, files, root, unreadable_ok=True)  # hash_files's bytes, so a readable corpus keeps its hash
    for problem in found.problems if found else ():
        h.update(f"{problem.path.relative_to(corpus)}\0{problem.reason}\0".encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:16]
