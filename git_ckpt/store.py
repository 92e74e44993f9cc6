"""The storage contract (DESIGN.md, "Storage layout"): every command reads and writes through here.

=============================  ==============================================================
``refs/ckpt/T/N``              checkpoint commit N of task T (immutable)
checkpoint commit              tree = worktree snapshot; parents = [HEAD?, index commit, meta commit]
index commit                   tree = the index as staged; parent = HEAD (when born)
meta commit                    tree = {manifest.json, overlay.tar?, stages/1|2|3/…?, raw/…?}
``refs/ckpt/T/promoted``       the promoted checkpoint of T (with a reflog)
``refs/ckpt/T/log``            the ledger: a chain of commits with {event.json, card.json}
``refs/notes/ckpt``            verifier results, one JSON line each, on the checkpoint commit
``refs/ckpt-remotes/R/T/N``    checkpoints fetched from remote R
``$GIT_DIR/ckpt/TASK``         the current task of this worktree
=============================  ==============================================================
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Callable

import msgspec

from .errors import CkptError, CorruptError, NotFoundError, UsageError
from .gitcore import Repo, TreeEntry, read_state, ref_number
from .words import short_base
from .model import MAX_EVENT, MAX_MANIFEST, Event, Manifest, decode_json, decode_manifest, escape, path_display, task_name_problem

if TYPE_CHECKING:
    from pathlib import Path

    from .overlay import Opener

PREFIX = "refs/ckpt/"
REMOTE_PREFIX = "refs/ckpt-remotes/"
NOTES_REF = "refs/notes/ckpt"
DEFAULT_TASK = "default"

_TASK_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_REMOTE_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def check_task_name(name: str) -> str:
    """Validate a task name of this repository's own (it becomes one ref component), for
    commands that write the task.  Raises :class:`UsageError`.

    Letters, digits, ``.``, ``_`` and ``-``, starting with a letter or digit, at most 100
    characters, not all digits, no ``..``, not ending in ``.lock`` (git's ref-name rules).  A
    fetched task (``REMOTE:T``) is refused with its own message: it is read-only here.
    """
    remote, _, bare = name.rpartition(":")
    if remote and remote_name_ok(remote) and not task_name_problem(bare):
        raise UsageError(
            f"{name} is a task fetched from {remote}: it is read-only here",
            f"continue it under a task name of your own: git ckpt task start NAME, then git ckpt restore {name}/N",
        )
    if task_name_problem(name):
        raise UsageError(
            f"invalid task name {name!r}",
            "use letters, digits, '.', '_' and '-' (not all digits), e.g. fix-auth-null",
        )
    return name


def own_task_name(repo: Repo, name: str, *, new: bool = False) -> str:
    """:func:`check_task_name` for a command that writes the task, knowing the repository: a
    ``REMOTE:T`` whose remote is not configured (and has nothing fetched under its name) is
    :func:`remote_problem`'s error, the one every command gives for such a remote, rather than
    "a task fetched from REMOTE", which it is not.  With ``new`` (``task start``), a name
    :func:`reserved_task_name` refuses is refused unless that task exists already.  Returns
    ``name``; raises :class:`UsageError`."""
    remote, _, bare = name.rpartition(":")
    if (remote and remote_name_ok(remote) and not task_name_problem(bare)
            and not repo.refs_under(f"{REMOTE_PREFIX}{remote}/") and (problem := remote_problem(repo, remote)) is not None):
        raise problem
    check_task_name(name)
    if new and (why := reserved_task_name(name)) is not None and not task_exists(repo, name):
        raise UsageError(f"task name {name!r} {why}", "choose another name, e.g. fix-auth-null")
    return name


def reserved_task_name(name: str) -> str | None:
    """Why ``name``, a valid task name, may not begin a new task, or None: ``HEAD`` and git's
    other ``*_HEAD`` names (``git ckpt show HEAD`` is the commit, never the task), and the names
    of git ckpt's own syntax, ``promoted`` and ``log`` (``promoted`` alone is the current task's
    promoted checkpoint; each task keeps ``refs/ckpt/T/promoted`` and ``refs/ckpt/T/log``).
    Compared in any letter case: refs are files on case-insensitive file systems.  A task of
    such a name made before is still read and written."""
    up = name.upper()
    if up == "HEAD" or up.endswith("_HEAD"):
        return "is one of git's own revision names (HEAD, FETCH_HEAD, ...)"
    if up in ("PROMOTED", "LOG"):
        return f"is a word of git ckpt's checkpoint names (T/{name.lower()})"
    return None


def check_task_spec(name: str) -> str:
    """Validate a task name for a read-only view: a task of this repository (``T``, as
    :func:`check_task_name`) or a task fetched from a remote (``REMOTE:T``, read from
    ``refs/ckpt-remotes/REMOTE/T/…``).  Returns ``name``; raises :class:`UsageError`."""
    remote, _, bare = name.rpartition(":")
    if remote and remote_name_ok(remote) and not task_name_problem(bare):
        return name
    return check_task_name(name)


def split_task(task: str) -> tuple[str | None, str]:
    """``REMOTE:T`` → ``(REMOTE, T)``; a task of this repository ``T`` → ``(None, T)``."""
    remote, sep, bare = task.rpartition(":")
    return (remote, bare) if sep else (None, task)


def is_fetched_task(task: str) -> bool:
    """Whether ``task`` names a task fetched from a remote (``REMOTE:T``): read-only here."""
    return ":" in task


def shown_id(task: str, cid: object) -> object:
    """A checkpoint id ``cid`` from ``task``'s ledger as this repository names it: for a fetched
    task ``REMOTE:T``, a ``T/N`` of that very task (``N`` as :func:`git_ckpt.gitcore.ref_number`
    reads it) becomes ``REMOTE:T/N``, the id ``show`` and ``restore`` take (the teammate's
    ledger says ``T/3``).  Anything else (another task's id, a malformed one, a non-string: a
    fetched ledger is written by whoever pushed it) and every id of a task of this repository
    is returned unchanged."""
    remote, bare = split_task(task)
    if remote is None or not isinstance(cid, str):
        return cid
    owner, sep, num = cid.rpartition("/")
    return f"{remote}:{cid}" if sep and owner == bare and ref_number(num) is not None else cid


def shown_ids(task: str, text: str) -> str:
    """``text`` (a line a view prints of ``task``'s ledger or card) with the ids of a fetched
    task's own checkpoints written as this repository names them: for ``REMOTE:T``, every
    ``T/N`` (``N`` as :func:`git_ckpt.gitcore.ref_number` reads it), ``T/@`` or ``T/promoted``
    that is not part of a longer name becomes ``REMOTE:T/…`` (the teammate's ledger says ``T/3``;
    here that is ``REMOTE:T/3``, the id ``show`` and ``restore`` take); ``T/03``, ``T/3x`` or
    ``T/3/4`` are left as written.  A task of this repository: ``text`` unchanged."""
    remote, bare = split_task(task)
    if remote is None:
        return text
    return re.sub(r"(?<![A-Za-z0-9._:/-])" + re.escape(bare) + r"/(?=(?:[1-9][0-9]{0,8}|@|promoted)(?![A-Za-z0-9_/:-]|\.[A-Za-z0-9]))",
                  f"{remote}:{bare}/", text)


def task_prefix(task: str) -> str:
    """Where the refs of ``task`` live: ``refs/ckpt/T/`` or, for ``REMOTE:T``,
    ``refs/ckpt-remotes/REMOTE/T/`` (what ``git ckpt fetch`` writes)."""
    remote, bare = split_task(task)
    return f"{REMOTE_PREFIX}{remote}/{bare}/" if remote else f"{PREFIX}{bare}/"


def remote_problem(repo: Repo, remote: str) -> UsageError | None:
    """Why ``remote`` is not a configured remote (the one error push, fetch, ``list --remote``
    and ``REMOTE:T/N`` names give, exit 2), or None when ``git remote get-url`` knows it.
    Like ``git fetch``, a remote is a name from ``remote.NAME.url``; a URL or path is not one."""
    if not remote_name_ok(remote) or remote.endswith((".lock", ".")):
        if "\0" not in remote and not remote.startswith("-") and repo.git("remote", "get-url", "--", remote, check=False).returncode == 0:
            # git's remote names are freer than ours (REMOTE:T/N, refs/ckpt-remotes/REMOTE/T/N)
            fixed = re.sub(r"[^A-Za-z0-9._-]+", "-", remote).strip(".-") or "origin2"
            return UsageError(f"remote {remote!r} has a name git ckpt cannot use: letters, digits, '.', '_' and '-' only",
                              f"git remote rename {remote} {fixed}")
        named = _remote_of_url(repo, remote)
        head = remote.partition("/")[0]
        if named is None and head != remote and remote_name_ok(head) and repo.git("remote", "get-url", "--", head, check=False).returncode == 0:
            return UsageError(f"{remote!r} is not a configured remote",
                              f"did you mean {head}? ({remote} names a branch of it; checkpoints are pushed and fetched "
                              "for a whole remote)")
        return UsageError(f"{remote!r} is not a configured remote",
                          f"that is the URL of remote {named}; name the remote instead" if named else
                          "git ckpt pushes and fetches through a named remote: git remote add NAME URL adds one (git remote -v lists them)")
    if repo.git("remote", "get-url", remote, check=False).returncode != 0:
        from .words import suggestion

        near = suggestion(remote, repo.git("remote", check=False).stdout.decode("utf-8", "replace").split())
        return UsageError(f"{remote!r} is not a configured remote",
                          (f"{near} " if near else "") + f"git remote add {remote} URL adds it (git remote -v lists the remotes)")
    return None


def _remote_of_url(repo: Repo, url: str) -> str | None:
    """The name of the configured remote whose URL is ``url``: as written, or the same directory
    on disk however spelt (a relative or absolute path, ``file://`` URL, trailing ``/``, the
    ``.git`` suffix git itself tries: :func:`_local_dir`); None when no remote has it."""
    proc = repo.git("config", "-z", "--get-regexp", r"^remote\..*\.url$", check=False)
    here = _local_dir(url)
    for rec in proc.stdout.split(b"\0"):
        key, _, value = rec.decode("utf-8", "replace").partition("\n")
        if not key:
            continue
        if value == url or (here is not None and _local_dir(value, str(repo.workdir)) == here):
            return key[len("remote."):-len(".url")]
    return None


def _local_dir(url: str, base: str = "") -> str | None:
    """The real path of the directory a local remote URL names (``PATH``, ``file://PATH`` with
    %-escapes, ``PATH`` meaning ``PATH.git`` when only that exists, as git's transport tries),
    a relative ``PATH`` read from ``base`` (a configured URL: the worktree's top, where git
    reads it) or the current directory (a typed one); None for any other URL or a path that
    names no directory."""
    from urllib.parse import unquote, urlsplit

    if url.startswith("file://"):
        try:
            parts = urlsplit(url)
        except ValueError:  # "file://[x": no URL (git reads some such; it names no directory of ours to compare)
            return None
        if parts.netloc not in ("", "localhost"):
            return None
        url = unquote(parts.path)
    elif "://" in url or url.startswith("-"):
        return None
    if not url or "\0" in url:
        return None
    url = os.path.join(base, url) if base else url
    for candidate in (url, url.rstrip("/") + ".git"):
        if candidate and os.path.isdir(candidate):
            return os.path.realpath(candidate)
    return None


def ckpt_ref(task: str, number: int) -> str:
    """``refs/ckpt/T/N`` (``refs/ckpt-remotes/REMOTE/T/N`` for a fetched ``REMOTE:T``)."""
    return f"{task_prefix(task)}{number}"


def promoted_ref(task: str) -> str:
    """``refs/ckpt/T/promoted`` (under ``refs/ckpt-remotes/REMOTE/`` for ``REMOTE:T``)."""
    return f"{task_prefix(task)}promoted"


def log_ref(task: str) -> str:
    """``refs/ckpt/T/log`` (under ``refs/ckpt-remotes/REMOTE/`` for ``REMOTE:T``)."""
    return f"{task_prefix(task)}log"


# ---------------------------------------------------------------------------- current task


TASK_MAX = 4096  # the largest $GIT_DIR/ckpt/TASK read (a task name is far shorter)


def current_task(repo: Repo) -> str:
    """The task named in ``$GIT_DIR/ckpt/TASK`` (per worktree), or ``default`` when it is absent
    or names no valid task.  Raises :class:`CorruptError` when it is not a regular file of at
    most :data:`TASK_MAX` bytes (:func:`git_ckpt.gitcore.read_state`)."""
    try:
        name = read_state(repo.git_dir / "ckpt" / "TASK", TASK_MAX).decode().strip()
    except (FileNotFoundError, UnicodeDecodeError):
        return DEFAULT_TASK
    try:
        return check_task_name(name)
    except UsageError:
        return DEFAULT_TASK


def set_current_task(repo: Repo, task: str) -> None:
    """Write ``$GIT_DIR/ckpt/TASK`` atomically."""
    check_task_name(task)
    atomic_write(repo.ckpt_dir() / "TASK", (task + "\n").encode())


def atomic_write(path: os.PathLike[str] | str, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to a temp file beside ``path``, fsync, then ``os.replace``; with ``mode``
    the file gets exactly those permission bits (set before it replaces ``path``), else those a
    new file gets (0666 less the umask).  The temp file is made by ``mkstemp`` (``O_CREAT|O_EXCL``,
    a random name): a name planted beside ``path`` in advance (a symlink in a directory a
    restored checkpoint or another user filled) is never followed, as git's lock files are not."""
    import tempfile

    path = os.fspath(path)
    directory, name = os.path.split(path)
    fd, tmp = tempfile.mkstemp(prefix=f"{name}.", suffix=".tmp", dir=directory or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), mode if mode is not None else 0o666 & ~_umask())
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)  # a full disk must not leave a half-written temp file behind
        raise


def link_on_the_way(root: Path, path: Path) -> Path | None:
    """The first directory between ``root`` and ``path`` (below ``root``, above ``path``) that is
    a symlink, or None: a worktree file git ckpt writes (an agent's settings, a hook) must not
    be reached through a symlink a restored checkpoint may have put there (``.claude ->
    ~/.claude``), which ``O_NOFOLLOW`` on the last component alone does not catch."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        return None
    cur = root
    for part in rel.parts[:-1]:
        cur = cur / part
        if cur.is_symlink():
            return cur
    return None


def _umask() -> int:
    """The process umask (read by setting it and setting it back)."""
    old = os.umask(0o022)
    os.umask(old)
    return old


def tasks(repo: Repo) -> list[str]:
    """Every task with a checkpoint or a ledger, sorted."""
    return _task_names(repo, PREFIX)


def _task_names(repo: Repo, prefix: str) -> list[str]:
    """The task names of the refs under ``prefix``, sorted; a name that is not a valid task name
    (:func:`git_ckpt.model.task_name_problem`: a ref a teammate or another tool made, non-UTF-8
    bytes included) is no task and is left out."""
    return sorted({t for ref in repo.refs_under(prefix) if "/" in ref[len(prefix):]
                   and not task_name_problem(t := ref[len(prefix):].split("/", 1)[0])})


def task_exists(repo: Repo, task: str, prefix: str = PREFIX) -> bool:
    """Whether ``task`` has any ref under ``prefix`` (a checkpoint, its ledger, a promotion), or
    is this worktree's current task (which exists before its first save)."""
    if prefix == PREFIX and task == current_task(repo):
        return True
    return bool(repo.refs_under(f"{prefix}{task}/"))


def task_hint(repo: Repo, task: str, prefix: str = PREFIX, shown: str = "", *, fetched: bool = False) -> str:
    """The hint for an unknown task: "did you mean …?" when a task's name is close, else the
    tasks there are; always how to see them all.  With ``fetched`` (a command that reads fetched
    tasks too: the views, and ids, REMOTE:T/N) the fetched ``REMOTE:T`` names are among them,
    after the local ones.  The listing named is ``git ckpt task list`` (which has both) for
    every command alike; ``git ckpt list --remote R`` for a name under a remote (``shown``)."""
    import difflib

    bare = _task_names(repo, prefix)
    names = [shown + n for n in bare]
    theirs = {f"{r}:{t}": t for t, remotes in fetched_tasks(repo).items() for r in remotes} if fetched and not shown else {}
    # one listing for every unknown task name: task list (this repository's tasks, then fetched
    # ones); a fetched REMOTE:T's is that remote's checkpoints
    listing = f"git ckpt list --remote {shown[:-1]} shows every checkpoint" if shown else "git ckpt task list shows every task"
    close = [shown + c for c in difflib.get_close_matches(task, bare, n=3, cutoff=0.6)]
    near = difflib.get_close_matches(task, sorted(set(theirs.values())), n=3, cutoff=0.6)
    close += [spec for spec, t in theirs.items() if t in near]
    if close:
        return f"did you mean {' or '.join(close[:3])}? {listing}"
    names += list(theirs)
    if names:
        more = " …" if len(names) > 5 else ""
        return f"the tasks are {', '.join(names[:5])}{more}; {listing}"
    return f"git ckpt fetch {shown[:-1]} brings its checkpoints" if shown else "no task has checkpoints yet; git ckpt save makes one"


def existing_task(repo: Repo, name: str, prefix: str = PREFIX, shown: str = "", *, fetched: bool = False,
                  bare_fetched: bool = False, suggest_fetched: bool = False) -> str:
    """``name`` checked (:func:`check_task_name`) and known (:func:`task_exists`), else
    :class:`NotFoundError` (exit 4) with :func:`task_hint`: for commands that read a task.

    With ``fetched`` (read-only views) a task fetched from a remote, ``REMOTE:T``
    (:func:`check_task_spec`), is looked up under ``refs/ckpt-remotes/REMOTE/`` (an unconfigured
    remote with nothing fetched under its name is :func:`remote_problem`'s error, exit 2), and a
    bare ``T`` that exists only as fetched is returned as is, for the view to say so; without it
    ``REMOTE:T`` is :func:`check_task_name`'s read-only refusal (exit 2).  ``suggest_fetched``:
    the hint for an unknown name suggests fetched tasks too (a command that takes ``REMOTE:T``
    its own way, as ``list --task``)."""
    if fetched and prefix == PREFIX and not shown:
        remote, bare = split_task(check_task_spec(name))
        if remote is not None:
            rprefix = f"{REMOTE_PREFIX}{remote}/"
            if not task_exists(repo, bare, rprefix):
                if not repo.refs_under(rprefix) and (problem := remote_problem(repo, remote)) is not None:
                    raise problem
                raise NotFoundError(f"no task {remote}:{bare}", task_hint(repo, bare, rprefix, f"{remote}:"))
            return name
    task = own_task_name(repo, name) if prefix == PREFIX and not shown else check_task_name(name)
    if not task_exists(repo, task, prefix):
        remotes = _fetched_under(repo, task) if prefix == PREFIX and not shown else []
        if bare_fetched and remotes:
            return task
        if remotes:
            raise NotFoundError(f"no task {task}", f"it was fetched: {' or '.join(f'{r}:{task}' for r in remotes)} names it")
        raise NotFoundError(f"no task {shown}{task}", task_hint(repo, task, prefix, shown, fetched=fetched or suggest_fetched))
    return task


def writable_task(repo: Repo, name: str) -> str:
    """``name`` for a command that writes into a task it does not begin (``save --task``,
    ``task note NAME``, their MCP tools): :func:`existing_task`, whose refusal of an unknown name
    (:class:`NotFoundError`, exit 4, with "did you mean") also says how to begin a task of that
    name, so a typo never silently starts a second task.  Mirrors ``git switch`` refusing an
    unknown branch while ``git switch -c`` creates one."""
    try:
        return existing_task(repo, name)
    except NotFoundError as e:
        begin = f"git ckpt task start {check_task_name(name)} begins a task of that name"
        raise NotFoundError(e.message, f"{e.hint}; {begin}" if e.hint else begin) from None


def remote_name_ok(name: str) -> bool:
    """Whether ``name`` is a remote name git ckpt names fetched checkpoints under (``R`` of
    ``R:T/N``: letters, digits, ``.``, ``_``, ``-``, no ``..``)."""
    return bool(_REMOTE_NAME_RE.fullmatch(name)) and ".." not in name


@dataclass(frozen=True)
class CkptRef:
    """A ref git ckpt reads as one of a task's: ``refs/ckpt/T/NAME`` (``remote`` None) or the
    fetched ``refs/ckpt-remotes/R/T/NAME``; ``name`` is a checkpoint number (as
    :func:`git_ckpt.gitcore.ref_number` reads it), ``promoted`` or ``log``."""

    ref: str
    remote: str | None
    task: str
    name: str
    oid: str

    @property
    def id(self) -> str:
        """How git ckpt names it: ``T/NAME`` or ``R:T/NAME`` (what :func:`resolve` takes back)."""
        return f"{self.remote}:{self.task}/{self.name}" if self.remote else f"{self.task}/{self.name}"

    @property
    def number(self) -> int | None:
        """The checkpoint number, or None for ``promoted`` and ``log``."""
        return ref_number(self.name)


def parse_ckpt_ref(ref: str, oid: str = "") -> CkptRef | None:
    """``ref`` read as a task's ref (:class:`CkptRef`), or None when it is none: another depth,
    a remote name :func:`remote_name_ok` refuses, a task name :func:`task_name_problem`
    refuses, or a last part that is no checkpoint number, ``promoted`` or ``log``.  Every name
    from a ref (written by a teammate, a remote or another tool) passes here before it is shown,
    hinted or resolved."""
    if ref.startswith(REMOTE_PREFIX):
        parts = ref[len(REMOTE_PREFIX):].split("/")
        if len(parts) != 3 or not remote_name_ok(parts[0]):
            return None
        remote, task, name = parts
    elif ref.startswith(PREFIX):
        parts = ref[len(PREFIX):].split("/")
        if len(parts) != 2:
            return None
        remote, (task, name) = None, parts
    else:
        return None
    if task_name_problem(task) or (name not in ("promoted", "log") and ref_number(name) is None):
        return None
    return CkptRef(ref, remote, task, name, oid)


def ckpt_refs(repo: Repo, *, fetched: bool = True) -> list[CkptRef]:
    """Every task ref of this repository (``refs/ckpt/``) and, with ``fetched``, every fetched
    one (``refs/ckpt-remotes/``), as :func:`parse_ckpt_ref` reads them (others left out), in
    ref-name order."""
    refs = dict(repo.refs_under(PREFIX))
    if fetched:
        refs.update(repo.refs_under(REMOTE_PREFIX))
    return [c for name in sorted(refs) if (c := parse_ckpt_ref(name, refs[name])) is not None]


def fetched_tasks(repo: Repo) -> dict[str, list[str]]:
    """Task name → the remotes (sorted) whose fetched refs, ``refs/ckpt-remotes/R/T/...`` (a
    checkpoint, a ledger, a promotion), hold a task of that name; names that are no valid task
    name (:func:`git_ckpt.model.task_name_problem`) are left out.  Ordered by task name."""
    out: dict[str, set[str]] = {}
    for ref in repo.refs_under(REMOTE_PREFIX):
        parts = ref[len(REMOTE_PREFIX):].split("/")
        if len(parts) >= 3 and not task_name_problem(parts[1]) and remote_name_ok(parts[0]):
            out.setdefault(parts[1], set()).add(parts[0])
    return {t: sorted(out[t]) for t in sorted(out)}


def push_refused(repo: Repo, name: str, mine: str | None, theirs: str | None) -> bool:
    """Whether a remote's ``refs/ckpt/T/NAME`` at ``theirs`` refuses a push of this repository's
    at ``mine`` (None where one side has no such ref): the rule of ``git ckpt push``, which never
    overwrites what a remote holds.

    * ``log`` (the ledger): refused when the remote has one that ``mine`` does not fast-forward
      (like ``git push`` without ``--force``: ``git merge-base --is-ancestor THEIRS MINE``), or
      when this repository has none;
    * ``promoted``: never refused on its own (a push moves it, when the ledger is not refused);
    * any other name (a checkpoint ``N``): refused when the remote holds another commit there,
      or holds one this repository does not (the number is taken), as a create-only
      ``--force-with-lease=REF:`` push would be.

    Reads the object store only (never the remote); raises nothing of its own.
    """
    if theirs is None or theirs == mine:
        return False
    if name == "log":
        return mine is None or not repo.fast_forwards(mine, theirs)
    return name != "promoted"


def fetched_elsewhere(repo: Repo, task: str) -> list[str]:
    """The remotes (sorted) whose fetched ``task`` is not this repository's own pushed back: a
    fetched checkpoint ``T/N`` that ``refs/ckpt/T/N`` here does not hold, or a fetched ledger
    that the local one does not fast-forward (git ckpt push of ``task`` would then be refused:
    checkpoints are never overwritten, :func:`push_refused`).  Promotions are left out (push
    moves them), and so are numbers below this repository's highest that it no longer holds
    (dropped here after a push: numbers are never given again, so no push sends them)."""
    local = repo.refs_under(f"{PREFIX}{task}/")
    top = highest(repo, task)
    out = []
    for remote in fetched_tasks(repo).get(task, []):
        rprefix = f"{REMOTE_PREFIX}{remote}/{task}/"
        for ref, oid in repo.refs_under(rprefix).items():
            name = ref[len(rprefix):]
            n = ref_number(name)
            if n is None and name not in ("log", "promoted"):
                continue  # no checkpoint ref (``T/²``, ``T/007``, ``T/1_0``): no push sends or meets it
            mine = local.get(f"{PREFIX}{task}/{name}")
            if mine is None and n is not None and top is not None and n <= top[0]:
                continue  # a number this repository gave and dropped since: never given again, never pushed
            if push_refused(repo, name, mine, oid):
                out.append(remote)
                break
    return out


def _fetched_under(repo: Repo, task: str) -> list[str]:
    """The remotes whose fetched refs hold a task named ``task``, sorted."""
    return fetched_tasks(repo).get(task, [])


# ---------------------------------------------------------------------------- checkpoints


def write_meta_tree(repo: Repo, *, manifest: str, overlay_tar: str | None,
                    stages: list[tuple[int, str, int, bytes]], raw: list[tuple[bytes, int, str]],
                    merge_msg: str | None = None) -> str:
    """Write a checkpoint's meta tree, the layout :class:`Checkpoint` reads back: the blob
    ``manifest.json``; ``overlay.tar`` when the overlay is not empty; ``stages/S/PATH`` for each
    conflict stage ``(mode, blob, S, path)``; ``raw/PATH`` for each ``(path, mode, blob)`` whose
    bytes git's filters would not give back; ``MERGE_MSG`` (the blob ``merge_msg``) when saved
    mid-merge.  Returns the tree id."""
    entries: list[tuple[int, str, bytes]] = [(0o100644, manifest, b"manifest.json")]
    if overlay_tar:
        entries.append((0o100644, overlay_tar, b"overlay.tar"))
    if merge_msg:
        entries.append((0o100644, merge_msg, b"MERGE_MSG"))
    entries += [(mode, oid, b"stages/%d/" % stage + path) for mode, oid, stage, path in stages]
    entries += [(mode, oid, b"raw/" + path) for path, mode, oid in raw]
    return repo.mktree(entries)


@dataclass
class Checkpoint:
    """A checkpoint read from the object store.

    ``id`` is ``T/N`` (``REMOTE:T/N`` when fetched), ``commit`` the checkpoint commit id,
    ``parents`` its parent ids; the index and meta commits are always the last two parents.
    """

    repo: Repo
    id: str
    commit: str
    ref: str | None
    tree: str
    parents: list[str]
    manifest: Manifest

    @property
    def index_commit(self) -> str:
        """The index commit (second-to-last parent)."""
        return self.parents[-2]

    @property
    def meta_commit(self) -> str:
        """The meta commit (last parent)."""
        return self.parents[-1]

    @property
    def base(self) -> str | None:
        """HEAD at save time (None on an unborn branch)."""
        return self.parents[0] if len(self.parents) == 3 else None

    @cached_property
    def meta_tree(self) -> str:
        """The meta commit's tree (manifest.json, overlay.tar, stages/, raw/)."""
        return self.repo.tree_of(self.meta_commit)

    @cached_property
    def index_tree(self) -> str:
        """The tree of the index commit."""
        return self.repo.tree_of(self.index_commit)

    def meta_blob(self, name: str) -> bytes | None:
        """A blob at the top of the meta tree, or None when absent."""
        entry = self.repo.tree_entry(self.meta_tree, name)
        return None if entry is None else self.repo.read_blob(entry.oid)

    def meta_subtree(self, name: str) -> str | None:
        """The id of a subtree of the meta tree (``stages``, ``raw``), or None."""
        entry = self.repo.tree_entry(self.meta_tree, name)
        return entry.oid if entry is not None and entry.is_tree else None

    def raw_entries(self) -> dict[bytes, TreeEntry]:
        """``raw/`` of the meta tree, path (bytes) → TreeEntry, validated for a checkpoint that may
        be foreign: each a safe relative path (no ``..``, absolute path or ``.git``) of a regular
        file the checkpoint's tree holds.  Raises :class:`CorruptError` otherwise."""
        from .overlay import safe_relpath

        sub = self.meta_subtree("raw")
        if not sub:
            return {}
        out = {}
        for e in self.repo.ls_tree(sub):
            rel = safe_relpath(e.path)
            if rel != e.path or e.mode not in (0o100644, 0o100755) or self.repo.entry_mode(self.tree, rel) not in (0o100644, 0o100755):
                raise CorruptError(f"raw/ entry {path_display(e.path)!r} of {self.id} is not a file of its tree; refusing the checkpoint",
                                   "nothing was changed; the checkpoint was made by a broken or hostile tool")
            out[rel] = e
        return out

    def stage_entries(self) -> list[tuple[int, str, int, bytes]]:
        """``stages/1|2|3/PATH`` of the meta tree as ``(mode, oid, stage, path)``, validated
        (stage 1–3, a safe path).  Raises :class:`CorruptError` otherwise."""
        from .overlay import safe_relpath

        sub = self.meta_subtree("stages")
        if not sub:
            return []
        out = []
        for e in self.repo.ls_tree(sub):
            stg, _, path = e.path.partition(b"/")
            if stg not in (b"1", b"2", b"3") or not path or safe_relpath(path) != path:
                raise CorruptError(f"stages/ entry {path_display(e.path)!r} of {self.id} is malformed; refusing the checkpoint",
                                   "nothing was changed; the checkpoint was made by a broken or hostile tool")
            out.append((e.mode, e.oid, int(stg), path))
        return out

    def overlay_tar(self) -> bytes | None:
        """``overlay.tar`` bytes, or None when the overlay is empty (small archives and tests;
        extraction streams through :meth:`overlay_source`)."""
        return self.meta_blob("overlay.tar")

    def overlay_source(self) -> Opener | None:
        """A callable opening ``overlay.tar`` as a stream (``with src() as fh``), or None when the
        overlay is empty: the archive is read twice (validate, then write) and never held whole
        in memory."""
        entry = self.repo.tree_entry(self.meta_tree, "overlay.tar")
        if entry is None:
            return None
        if entry.is_tree or entry.mode == 0o160000:
            raise CorruptError(f"overlay.tar of {self.id} is not a file", "git ckpt check names the damage")
        oid = entry.oid
        return lambda: self.repo.open_blob(oid)


def load(repo: Repo, commit: str, *, id: str | None = None, ref: str | None = None) -> Checkpoint:
    """Read the checkpoint at ``commit``.  Raises :class:`CorruptError` (exit 7) when its manifest
    is malformed, or when ``ref`` (a ref under ``refs/ckpt/`` or ``refs/ckpt-remotes/``) names a
    commit that is not a checkpoint at all (something other than git ckpt wrote the ref: stored
    data that cannot be trusted, as a corrupt manifest); :class:`NotFoundError` (exit 4) when a
    revision the user named, reached through no such ref, is not a checkpoint."""
    kind = repo.object_type(commit)
    if kind is None:
        raise CorruptError(f"checkpoint object {commit} is missing from the object store")
    if kind != "commit":
        raise CorruptError(f"{id or commit} does not point at a commit")
    info = repo.read_commit(commit)
    parents: list[str] = list(info.parents)
    if len(parents) not in (2, 3):
        raise not_a_checkpoint(id or commit, ref, "", commit)
    try:
        entry = repo.tree_entry(parents[-1], "manifest.json")
        if entry is None:
            raise KeyError("manifest.json")
        cached = _MANIFESTS.get(entry.oid)
        if cached is None:
            data = repo.read_blob(entry.oid) if repo.blob_size(entry.oid) <= MAX_MANIFEST else None
    except (KeyError, CkptError):
        raise not_a_checkpoint(id or commit, ref, " (no manifest)", commit) from None
    if cached is None:
        if data is None:
            cached = f"larger than {MAX_MANIFEST} bytes"
        else:
            try:
                cached = decode_manifest(data)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                cached = escape(str(exc))
        _MANIFESTS[entry.oid] = cached
        while len(_MANIFESTS) > MANIFESTS_CACHED:
            del _MANIFESTS[next(iter(_MANIFESTS))]
    if isinstance(cached, str):
        raise CorruptError(f"the manifest of {escape(id or commit)} is corrupt: {cached}",
                           "nothing was changed; the checkpoint was made by a broken or hostile tool (git ckpt check names the damage)")
    base = parents[0] if len(parents) == 3 else None
    if cached.tree != info.tree or cached.base != base:
        # what it says it holds is not what it holds: every reader uses one or the other (the
        # tree a restore writes, the base the gate and status compare), so neither is believed
        what, said, held = ("tree", cached.tree, info.tree) if cached.tree != info.tree else ("base", cached.base, base)
        raise CorruptError(f"{escape(id or commit)} is damaged: its manifest names the {what} {short_base(said)}, "
                           f"its commit holds {short_base(held)}",
                           "nothing was changed; the checkpoint was made by a broken or hostile tool (git ckpt check names the damage)")
    return Checkpoint(repo, id or cached.id, commit, ref, info.tree, parents, cached)


#: How many decoded manifests (or why one is corrupt) :func:`load` keeps, by blob id: many
#: checkpoint commits may share one meta commit (a teammate's refs can make thousands name one
#: 64 MiB manifest), which is then decoded and validated once per process, not once per ref.
#: A blob id names its bytes, and a decoded :class:`Manifest` is never modified, so one
#: decoding serves every repository and caller.
MANIFESTS_CACHED = 4
_MANIFESTS: dict[str, Manifest | str] = {}


#: What a ref under refs/ckpt/ naming something other than a checkpoint means.
NOT_MADE_BY_US = "the ref was not made by git ckpt"


def not_a_checkpoint(name: str, ref: str | None, detail: str, commit: str | None = None) -> CkptError:
    """The error for a commit that is not a checkpoint: corrupt stored data (exit 7) when a ref
    under ``refs/ckpt/`` names it (git ckpt never writes such a ref), else an unknown checkpoint
    (exit 4: the user named some other commit)."""
    if ref is not None and ref.startswith((PREFIX, REMOTE_PREFIX)):
        if ref.startswith(REMOTE_PREFIX):
            fix = f"git ckpt fetch {ref[len(REMOTE_PREFIX):].partition('/')[0]} again replaces it"
        elif ref.endswith("/promoted"):  # no checkpoint to drop: the ref itself goes
            fix = f"git update-ref -d {ref} ends the promotion (then git ckpt verify promotes a checkpoint again)"
        else:
            fix = f"git ckpt drop {ref[len(PREFIX):]} removes the ref (the ledger records it)"
        named = commit[:12] if commit else escape(name)  # the ref's own name says nothing new
        return CorruptError(f"{ref} names {named}, which is not a checkpoint commit{detail}: {NOT_MADE_BY_US}", fix)
    return NotFoundError(f"{escape(name)} is not a checkpoint commit{detail}", "git ckpt list shows the checkpoints")


def damaged_ref(repo: Repo, spec: str, task: str) -> tuple[str, str, str, str] | None:
    """``(task, T/N, ref, commit)`` of the local ``refs/ckpt/T/N`` that ``spec`` (``T/N`` or
    ``N`` of ``task``) names, read without loading the checkpoint (for one that cannot be
    loaded); None when ``spec`` is not of that form or the ref does not exist."""
    t, sep, rest = spec.strip().rpartition("/")
    if not sep:
        t = task
    n = ref_number(rest)
    if n is None or not _TASK_RE.fullmatch(t or "") or ".." in t:
        return None
    ref = ckpt_ref(t, n)
    oid = repo.read_ref(ref)
    return None if oid is None else (t, f"{t}/{n}", ref, oid)


def is_local(repo: Repo, cp: Checkpoint) -> bool:
    """Whether ``cp`` is a checkpoint of this repository: ``refs/ckpt/T/N`` (T and N from its
    manifest) points at its commit.  A fetched checkpoint (``REMOTE:T/N``, or its commit named by
    id) is not, even when a local task has the same name, nor is a checkpoint named by the user
    as ``REMOTE:T/N`` (read from ``refs/ckpt-remotes/``), even when the same commit is also
    ``refs/ckpt/T/N`` here (a teammate pushing back your own checkpoint, or your own push
    fetched): what the user typed decides, so ``promote origin:T/N`` is refused in every clone."""
    if (cp.ref or "").startswith(REMOTE_PREFIX) or ":" in cp.id:
        return False
    m = cp.manifest
    if not _TASK_RE.fullmatch(m.task or "") or ".." in m.task or m.number < 1:
        return False
    return repo.read_ref(ckpt_ref(m.task, m.number)) == cp.commit


def replaced_by(repo: Repo, cp: Checkpoint) -> str | None:
    """Why ``cp`` is no longer its task's ``T/N`` though not dropped: ``refs/ckpt/T/N`` (T and N
    from its manifest) exists and names another object (a tree, a blob, another commit put
    there), said as ``"REF names OID, not its commit"`` for status and the gate alike.  None when
    the ref is absent (dropped) or holds ``cp``."""
    m = cp.manifest
    if not _TASK_RE.fullmatch(m.task or "") or ".." in m.task or m.number < 1:
        return None
    ref = ckpt_ref(m.task, m.number)
    held = repo.read_ref(ref)
    return f"{ref} names {held[:12]}, not its commit" if held is not None and held != cp.commit else None


def checkpoint_task(cp: Checkpoint) -> str:
    """The task whose refs hold ``cp``: ``REMOTE:T`` for one read from
    ``refs/ckpt-remotes/REMOTE/T/…`` (a fetched checkpoint: its promoted ref is
    ``refs/ckpt-remotes/REMOTE/T/promoted``, :func:`promoted_ref`), else the task its manifest names."""
    if cp.ref and cp.ref.startswith(REMOTE_PREFIX):
        remote, _, rest = cp.ref[len(REMOTE_PREFIX):].partition("/")
        t = rest.rpartition("/")[0]
        if remote and t:
            return f"{remote}:{t}"
    return cp.manifest.task


def numbered(repo: Repo, task: str, prefix: str = PREFIX) -> list[tuple[int, str]]:
    """``(N, commit id)`` of every numbered checkpoint of ``task``, ascending by N."""
    out: list[tuple[int, str]] = []
    base = task_prefix(task) if is_fetched_task(task) else f"{prefix}{task}/"
    for name, oid in repo.refs_under(base).items():
        last = name[len(base):]
        if (n := ref_number(last)) is not None:
            out.append((n, oid))
    out.sort()
    return out


def highest(repo: Repo, task: str, prefix: str = PREFIX) -> tuple[int, str] | None:
    """``numbered(repo, task, prefix)[-1]`` (the newest checkpoint's number and commit) without
    reading every ref of the task: a long task costs about what a short one does."""
    base = task_prefix(task) if is_fetched_task(task) else f"{prefix}{task}/"
    n = repo.highest_number_under(base)
    if n is None:
        return None
    oid = repo.read_ref(f"{base}{n}")
    if oid is None:  # a loose file that is no ref: let the full reading decide
        nums = numbered(repo, task, prefix)
        return nums[-1] if nums else None
    return n, oid


def latest(repo: Repo, task: str) -> Checkpoint | None:
    """The highest-numbered checkpoint of ``task``, or None."""
    top = highest(repo, task)
    if top is None:
        return None
    n, oid = top
    return load(repo, oid, id=f"{task}/{n}", ref=ckpt_ref(task, n))


# ``@``, ``@~K``, and git's shorthands ``@~`` (``@~1``) and ``@~~`` (``@~2``): each ``~K`` (``~``
# alone: 1) is K steps back, summed as git does (``@~2~`` is ``@~3``); ASCII digits only (``\d``
# takes ``١`` too)
_AT = re.compile(r"@((?:~[0-9]{0,9}|\^1?){0,99})")


def promoted_id(repo: Repo, owner: str, commit: str, manifest_id: str) -> str:
    """The name of the checkpoint ``owner``'s promoted ref holds (``owner`` is ``T`` or
    ``REMOTE:T``; ``commit`` what the ref holds; ``manifest_id`` the ``T/N`` its manifest says):
    ``owner/N`` when ``owner``'s ref ``N`` holds ``commit`` too (a fetched one keeps its
    remote: never called by a local id), else ``owner/promoted`` (a manifest naming another
    task, or a number whose ref holds something else: the manifest is the writer's word, and
    a forged promoted ref must not be shown, restored or verified as another checkpoint).
    Every id returned resolves to ``commit``."""
    task, _, n = manifest_id.rpartition("/")
    num = ref_number(n)
    if task != split_task(owner)[1] or num is None:
        return f"{owner}/promoted"
    return f"{owner}/{num}" if repo.read_ref(ckpt_ref(owner, num)) == commit else f"{owner}/promoted"


_COUNTED = re.compile(r"([0-9]{1,9}|promoted|@)((?:~[0-9]{0,9}|\^1?){1,99})")


def _counted_back(repo: Repo, spec: str, owner: str, start: str, back: int, task: str) -> Checkpoint:
    """``T/N~K``, ``T/N^``, ``T/promoted~K`` (``owner`` is ``T`` or ``REMOTE:T``, ``start`` the
    ``N`` or ``promoted``): the checkpoint ``back`` places before ``start`` among the task's
    numbered checkpoints, as ``@~K`` counts from ``@`` (a dropped number is no place).  Raises
    :class:`NotFoundError` as :func:`resolve` does for ``start``, or when fewer checkpoints
    come before it."""
    first = resolve(repo, f"{owner}/{start}", task)
    remote, colon, t = owner.rpartition(":")
    prefix = f"{REMOTE_PREFIX}{remote}/" if colon else PREFIX
    n = ref_number(first.id.rpartition("/")[2])
    nums = numbered(repo, t, prefix)
    at = next((i for i, (k, oid) in enumerate(nums) if k == n and oid == first.commit), None)
    listing = f"git ckpt list{' --remote ' + remote if colon else ''} --task {t} shows them"
    if at is None:  # a promoted checkpoint that is no longer a numbered one (dropped)
        raise NotFoundError(f"no checkpoint {escape(spec)}: {first.id} is not one of task {owner}'s numbered checkpoints",
                            listing)
    if back > at:
        raise NotFoundError(f"{escape(spec)}: task {owner} has only {at} checkpoint(s) before {first.id}",
                            f"{owner}/{nums[0][0]} is the oldest; {listing}")
    k, oid = nums[at - back]
    return load(repo, oid, id=f"{owner}/{k}", ref=f"{prefix}{t}/{k}")


def at_steps(rest: str) -> int | None:
    """How many checkpoints before ``@`` the name ``rest`` (``@``, ``@~K``, ``@~``, ``@~~``,
    ``@~2~``, ``@^``, ``@^^``, ``@^1``, …) goes back, as git counts ``~`` and ``^`` steps on a
    line of commits (a checkpoint's one parent: ``^2`` and beyond name nothing); None when it
    is no such name."""
    m = _AT.fullmatch(rest)
    if m is None:
        return None
    return sum(int(k[1:] or 1) if k[0] == "~" else 1 for k in re.findall(r"~[0-9]*|\^1?", m.group(1)))


def _newest_event(repo: Repo, task: str, match: Callable[[Event], bool], limit: int = 500) -> Event | None:
    """The newest event of ``task``'s ledger (``refs/ckpt/T/log``: a first-parent chain of
    commits whose trees hold ``event.json``) that ``match`` accepts, within ``limit`` events;
    read here, below :mod:`git_ckpt.ledger` (which writes and verifies the chain), so that
    resolving a name does not depend on the ledger module."""
    oid: str | None = repo.read_ref(log_ref(task))
    while oid and limit > 0:
        c = repo.read_commit(oid)
        entry = repo.tree_entry(c.tree, "event.json")
        if entry is None:
            raise CorruptError(f"ledger of task {task} is corrupt at {oid[:12]}: no event.json")
        if repo.blob_size(entry.oid) > MAX_EVENT:  # bounded before it is read (a fetched ledger)
            raise CorruptError(f"ledger of task {task} is corrupt at {oid[:12]}: event.json is larger than {MAX_EVENT} bytes")
        try:
            ev = decode_json(repo.read_blob(entry.oid), Event)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise CorruptError(f"ledger of task {task} is corrupt at {oid[:12]}: {exc}",
                               f"git ckpt log --verify --task {task} names the first bad event") from None
        if match(ev):
            return ev
        oid = c.parents[0] if c.parents else None
        limit -= 1
    return None


def left_whole(data: dict[str, object]) -> bool:
    """Whether a ``restore``/``undo`` event's ``data`` left the worktree at its target whole: a
    restore of every path, or of some paths after which the worktree equalled the target
    (``whole``, recorded by restore and undo for a checkpoint of this repository: ``restore T/1
    -- f`` when only ``f`` differed).  Then ``@`` names the target (:func:`restored_target`)."""
    return not data.get("paths") or data.get("whole") is True


def restored_target(repo: Repo, task: str) -> tuple[str, str, str] | None:
    """``(id, ref, commit)`` of the checkpoint this worktree was last restored to whole, when
    that restore (or undo) is newer than every save of ``task``: then the worktree matches it
    and ``@`` names it.  The target is a checkpoint of ``task`` (``T/N``), of another task of
    this repository (``T2/N``) or a fetched one (``REMOTE:T/N``, read from
    ``refs/ckpt-remotes/REMOTE/T/N``).  None when a save came after, or the ledger cannot say.

    Walks the ledger back to the newest ``save`` event or restore/undo of this worktree (one
    of some paths counts only when it left the target whole, :func:`left_whole`; else None)
    (at most 500 events); the event is attacker-writable, so its target is trusted only when
    its ref still points at the commit it names."""
    here = str(repo.git_dir)

    def relevant(ev: Event) -> bool:
        return ev.type == "save" or (ev.type in ("restore", "undo") and ev.data.get("worktree") == here)

    try:
        ev = _newest_event(repo, task, relevant)
    except (CorruptError, KeyError, ValueError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    if ev is None or ev.type == "save" or not left_whole(ev.data):
        return None  # a restore of some paths that left other differences: @ is the latest
    target, commit = ev.data.get("target"), ev.data.get("target_commit")
    if not isinstance(target, str) or not isinstance(commit, str):
        return None
    if is_fetched_task(task) and not target.startswith(task + "/"):
        return None  # a teammate's ledger names no checkpoint of this repository
    ref = held_ref(repo, target, commit)
    return (target, ref, commit) if ref is not None else None


def held_ref(repo: Repo, cid: str, commit: str) -> str | None:
    """The ref of checkpoint id ``cid`` (``T/N``, or ``REMOTE:T/N`` under
    ``refs/ckpt-remotes/REMOTE/``) when it still holds ``commit``, else None (also for an id
    that is no checkpoint name).  What an id read from a ledger event is trusted by: the event
    is attacker-writable, and a fetched ref may have been replaced since it was written."""
    owner, sep, num = cid.rpartition("/")
    n = ref_number(num) if sep else None
    remote, colon, bare = owner.rpartition(":")
    if (n is None or (colon and not remote_name_ok(remote))
            or not _TASK_RE.fullmatch(bare) or ".." in bare or task_name_problem(bare)):
        return None
    ref = ckpt_ref(owner, n)
    return ref if repo.read_ref(ref) == commit else None


def at(repo: Repo, task: str) -> Checkpoint | None:
    """``@`` of ``task`` in this worktree (README "``@`` after a restore"): the checkpoint the
    worktree was last restored to whole (:func:`restored_target`, a fetched ``REMOTE:T/N``
    included) until the next save, else the latest; None when the task has no checkpoint.
    What ``diff``, ``show``, ``verify`` and ``status`` compare with by default."""
    found = restored_target(repo, task)
    if found is not None:
        cid, ref, oid = found
        return load(repo, oid, id=cid, ref=ref)
    return latest(repo, task)


def _removed_how(repo: Repo, task: str, cid: str) -> str | None:
    """How checkpoint ``cid`` of ``task`` went, by the newest ``drop``/``prune`` event of the
    task's ledger naming it (``dropped``, ``pruned by git ckpt gc``), or None (never recorded, or
    the ledger unreadable: this only explains a refusal)."""
    def names(ev: Event) -> bool:
        if ev.type == "drop":
            return bool(ev.data.get("id") == cid)
        return ev.type == "prune" and isinstance(ev.data.get("pruned"), list) and cid in ev.data["pruned"]

    try:
        ev = _newest_event(repo, task, names)
    except (CkptError, KeyError, ValueError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    if ev is None:
        return None
    return "dropped" if ev.type == "drop" else "pruned by git ckpt gc"


def resolve_default(repo: Repo, task: str | None = None) -> Checkpoint:
    """``@`` of ``task`` (default: the current task) for a command given no checkpoint (``show``,
    ``diff``, ``verify``, ``promote``): :func:`resolve` of ``@``, whose task without checkpoints
    is nothing to act on (:class:`UsageError`, exit 2, as ``undo`` with no restore to undo),
    not an unknown name (exit 4 is for a name that names nothing)."""
    return resolve(repo, "@", task or current_task(repo))


# The commands that take paths after their checkpoint: what a path given where the checkpoint
# belongs is told (every other command is told it takes checkpoint names, not paths).
PATHS_AFTER = {
    "restore": "the checkpoint comes first: git ckpt restore CKPT -- PATHS",
    "diff": "paths go after --: git ckpt diff [CKPT] -- PATHS",
}


def path_given_hint(command: str | None) -> str:
    """The hint for a path given where ``command`` (``show``, ``diff``, …; None: a caller that is
    no command) wants a checkpoint: where its paths go, or that it takes none."""
    if command in PATHS_AFTER:
        return PATHS_AFTER[command]
    who = f"git ckpt {command} takes" if command else "a checkpoint is named"
    return f"{who} a checkpoint name (T/N, N, @, promoted), not a path: git ckpt list shows the checkpoints"


def resolve(repo: Repo, spec: str, task: str | None = None, *, command: str | None = None) -> Checkpoint:
    """Resolve a checkpoint name (DESIGN.md "Commands"): ``T/N``, ``N``, ``@``, ``@~K`` (``@~``,
    ``@~~``: :func:`at_steps`), ``promoted``, ``T/@``, ``T/promoted``, ``REMOTE:T/N``, or any revision naming a checkpoint
    commit.  ``task`` is the current task (for bare ``N``/``@``/``promoted``); ``command`` the
    command the name was given to, for the hint when it is a path (:func:`path_given_hint`).

    Raises :class:`NotFoundError` with a hint when nothing matches.
    """
    task = task or current_task(repo)
    spec = spec.strip()
    if not spec or any(ord(c) < 32 for c in spec):
        raise NotFoundError(f"invalid checkpoint name {spec!r}", "git ckpt list shows the checkpoints")
    prefix = PREFIX
    shown_prefix = ""
    body = spec
    if ":" in spec and not spec.startswith(":"):
        remote, _, body = spec.rpartition(":")  # a task name holds no ':', a URL may (file://…/r.git:T/1)
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", remote):
            # the one error every command gives for a remote (a URL: "that is the URL of remote origin")
            raise remote_problem(repo, remote) or NotFoundError(
                f"invalid remote name in {spec!r}", "git remote lists the remotes; write REMOTE:T/N, e.g. origin:fix-auth/3")
        prefix = f"{REMOTE_PREFIX}{remote}/"
        shown_prefix = f"{remote}:"
        if not repo.refs_under(prefix) and (problem := remote_problem(repo, remote)) is not None:
            raise problem  # nothing fetched under that name, and no such remote to fetch from
    t, sep, rest = body.rpartition("/")
    if not sep:
        t, rest = task, body
    if _TASK_RE.fullmatch(t or "") and ".." not in t:
        if (m := _COUNTED.fullmatch(rest)) is not None and m.group(1) != "@":
            return _counted_back(repo, spec, f"{shown_prefix}{t}", m.group(1), at_steps("@" + m.group(2)) or 0, task)
        n = ref_number(rest)
        if n is None and (rest.isnumeric() or (rest[:2] == "@~" and at_steps(rest) is None
                                               and all(k.isnumeric() or not k for k in rest[2:].split("~")))):
            raise NotFoundError(f"no checkpoint {escape(spec)}: a checkpoint number is a positive whole number in ASCII "
                                "digits without a leading zero (T/3), and so is K in @~K (@~2)", "git ckpt list shows the checkpoints")
        if n is not None:
            ref = f"{prefix}{t}/{n}"
            oid = repo.read_ref(ref)
            if oid is None:
                if not task_exists(repo, t, prefix):
                    raise NotFoundError(f"no checkpoint {shown_prefix}{t}/{n}: there is no task {shown_prefix}{t}",
                                        task_hint(repo, t, prefix, shown_prefix, fetched=True))
                listing = f"git ckpt list{' --remote ' + shown_prefix[:-1] if shown_prefix else ''} --task {t} shows its checkpoints"
                gone = _removed_how(repo, t, f"{t}/{n}") if not shown_prefix else None
                if gone is not None:
                    raise NotFoundError(f"no checkpoint {t}/{n}: it was {gone} (numbers are never given again)",
                                        f"git ckpt log --task {t} shows when; {listing}")
                newest = highest(repo, t, prefix)
                raise NotFoundError(f"no checkpoint {shown_prefix}{t}/{n}",
                                    f"did you mean {shown_prefix}{t}/{newest[0]} (the latest of {shown_prefix}{t})? {listing}"
                                    if newest is not None else listing)
            return load(repo, oid, id=f"{shown_prefix}{t}/{n}", ref=ref)
        if rest == "promoted":
            ref = f"{prefix}{t}/promoted"
            oid = repo.read_ref(ref)
            if oid is None:
                if not task_exists(repo, t, prefix):
                    raise NotFoundError(f"no task {shown_prefix}{t}", task_hint(repo, t, prefix, shown_prefix, fetched=True))
                raise NotFoundError(f"task {t} has no promoted checkpoint", "git ckpt verify promotes a checkpoint whose verifiers pass")
            cp = load(repo, oid, id=f"{shown_prefix}{t}/promoted", ref=ref)
            cp.id = promoted_id(repo, f"{shown_prefix}{t}", oid, cp.manifest.id)
            owner, _, said = cp.manifest.id.rpartition("/")
            said_num = ref_number(said)
            if (not shown_prefix and cp.id.endswith("/promoted") and owner == t and said_num is not None
                    and repo.read_ref(f"{PREFIX}{t}/{said_num}") is None):
                cp.id = f"{t}/{said_num}"  # our own promotion of a checkpoint since dropped (an older drop --force): its name
            return cp
        back_steps = at_steps(rest)
        if back_steps is not None:
            back = back_steps
            there = restored_target(repo, t) if prefix == PREFIX else None
            at = ref_number(there[0][len(t) + 1:]) if there is not None and there[0].startswith(t + "/") else None
            if there is not None and at is None:  # restored to another task's T2/N or REMOTE:T2/N: @ is that one
                if back == 0:
                    return load(repo, there[2], id=there[0], ref=there[1])
                owner, _, num = there[0].rpartition("/")  # @~K counts back through T2's checkpoints
                remote, colon, t = owner.rpartition(":")  # restored_target checked REMOTE and T2
                if colon:
                    prefix, shown_prefix = f"{REMOTE_PREFIX}{remote}/", f"{remote}:"
                at = ref_number(num)
            if back == 0 and at is None:  # plain @: the newest, found without reading every ref
                newest = highest(repo, t, prefix)
                if newest is not None:
                    return load(repo, newest[1], id=f"{shown_prefix}{t}/{newest[0]}", ref=f"{prefix}{t}/{newest[0]}")
            nums = numbered(repo, t, prefix)
            if not nums and not task_exists(repo, t, prefix):
                raise NotFoundError(f"no task {shown_prefix}{t}", task_hint(repo, t, prefix, shown_prefix, fetched=True))
            if not nums and not shown_prefix:  # @ of a task of one's own that has none: nothing to act on
                raise UsageError(f"task {t} has no checkpoints yet: nothing to act on", "git ckpt save makes one")
            if not nums:
                raise NotFoundError(f"task {shown_prefix}{t} has no checkpoints",
                                    f"its ledger was fetched without any: git ckpt task show {shown_prefix}{t} shows its card "
                                    f"(git ckpt fetch {shown_prefix[:-1]} brings checkpoints pushed since)"
                                    if shown_prefix else "git ckpt save makes one")
            top = len(nums) - 1
            if at is not None:  # after a whole restore, @ is the checkpoint this worktree matches
                if (cur := repo.read_ref(f"{prefix}{t}/{at}")) is not None and (at, cur) in nums:
                    top = nums.index((at, cur))
            if back > top:
                listing = f"git ckpt list{' --remote ' + shown_prefix[:-1] if shown_prefix else ''} --task {t}"
                raise NotFoundError(f"{spec}: task {shown_prefix}{t} has only {top + 1} checkpoint(s) up to {shown_prefix}{t}/{nums[top][0]}",
                                    f"@ is {shown_prefix}{t}/{nums[top][0]}, @~{top} the oldest; {listing} shows them")
            n, found = nums[top - back]
            return load(repo, found, id=f"{shown_prefix}{t}/{n}", ref=f"{prefix}{t}/{n}")
    if shown_prefix:
        if not task_name_problem(body) and repo.refs_under(f"{prefix}{body}/"):
            raise NotFoundError(f"{escape(spec)} is a task, not one of its checkpoints",
                                f"{escape(spec)}/@ names its latest; git ckpt list --remote {shown_prefix[:-1]} --task {body} shows them")
        theirs = [c.id for c in ckpt_refs(repo) if c.remote == shown_prefix[:-1] and c.number is not None]
        raise NotFoundError(f"no checkpoint {escape(spec)}", f"use REMOTE:T/N, e.g. {theirs[-1]}" if theirs
                            else "use REMOTE:T/N, e.g. origin:fix-auth/3")
    commit = repo.resolve_commit(spec)
    if commit is None:
        if not task_name_problem(spec) and repo.refs_under(f"{PREFIX}{spec}/"):  # a task's name, not one of its checkpoints
            raise NotFoundError(f"unknown checkpoint {spec!r}: it is a task", f"its checkpoints are {spec}/N: git ckpt list --task {spec} shows them")
        if os.path.lexists(os.path.join(repo.workdir, spec)) or os.path.lexists(spec):
            raise NotFoundError(f"unknown checkpoint {spec!r}: it is a path", path_given_hint(command))
        raise NotFoundError(f"unknown checkpoint {spec!r}", "git ckpt list shows the checkpoints of the current task")
    cp = load(repo, commit)
    return cp
