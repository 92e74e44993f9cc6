"""The commit gate (DESIGN behaviour 5): is the tree being committed verified evidence?

:func:`gate` is what the ``pre-commit`` hook runs: it allows a commit when the tree of the index
being committed (``$GIT_INDEX_FILE`` when git sets it: ``commit -a``, ``commit PATH``, else the
real index) equals the tree of the task's promoted checkpoint and that checkpoint's required
verifiers passed on its content.  Otherwise it names the differing paths (first 20 and a count)
or the failing verifier, and the one command that fixes it; every refusal is a ``gate-refused``
ledger event.  It acts only where ``git config ckpt.gate`` is true (set by ``hooks install``).

:func:`verify_commit` answers the same question for any commit (pre-push, CI): some checkpoint
with that tree, local or fetched, has passing results for every required verifier.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from typing import Any

from . import config, ledger, store, trust
from .config import Config, setting
from .errors import CkptError, NotFoundError
from .evidence import requirement, was_forced, why_missing
from .gitcore import Repo
from .model import path_display

SHOW_PATHS = 20
TRAILER = "Ckpt-Verified"


def enabled(repo: Repo) -> bool:
    """Whether ``ckpt.gate`` is true in this repository's git config."""
    return repo.config_bool("ckpt.gate")


def index_tree(repo: Repo, index_file: str | os.PathLike[str] | None) -> str:
    """The tree ``git write-tree`` makes of ``index_file`` (default: the real index).

    The file is copied first (into ``$GIT_DIR``, so split-index references still resolve), so
    the index git holds locked for the commit in progress is never touched.
    """
    src = os.fspath(index_file) if index_file else str(repo.index_path())
    with repo.temp_index(copy_real=False) as tmp:
        if os.path.exists(src):
            shutil.copyfile(src, tmp)
        return repo.git("write-tree", index_file=tmp).stdout.decode().strip()


@dataclass
class GateResult:
    """The gate's answer: ``allowed``; ``enabled``; the ``promoted`` checkpoint id; the ``tree``
    being committed; on refusal a one-line ``reason``, the first differing ``paths`` (``A``/``D``/
    ``M`` + path) and their ``count``, the ``failing`` verifiers (name → status), ``fix``
    (the one command that fixes it), and ``untrusted`` when the refusal is because
    ``.ckpt.toml`` is not trusted (the CLI exits 9 then)."""

    allowed: bool
    enabled: bool
    task: str
    tree: str = ""
    promoted: str | None = None
    reason: str = ""
    paths: list[str] = field(default_factory=list)
    count: int = 0
    failing: dict[str, str] = field(default_factory=dict)
    fix: str = ""
    untrusted: bool = False

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "allowed": self.allowed, "enabled": self.enabled, "task": self.task, "tree": self.tree,
            "promoted": self.promoted, "reason": self.reason, "paths": self.paths, "count": self.count,
            "failing": self.failing, "fix": self.fix, "untrusted": self.untrusted,
        }


def _diff(repo: Repo, old: str, new: str) -> list[str]:
    out = []
    for c in repo.diff_trees(old, new):
        out.append(f"{c.status} {path_display(c.path)}")
    return out


def check_tree(repo: Repo, cfg: Config, tree: str, task: str) -> GateResult:
    """Judge ``tree`` against the promoted checkpoint of ``task`` (no side effects); a tree that
    is not that checkpoint's is still allowed when it is the promoted, verified checkpoint of
    another of this repository's tasks (:func:`promoted_elsewhere`; ``promoted`` names it).  An
    untrusted ``.ckpt.toml`` (:mod:`git_ckpt.trust`) refuses first, with ``untrusted`` set: its
    required verifiers may have been loosened or deleted, so they cannot judge anything."""
    res = GateResult(False, True, task, tree)
    st = trust.state(repo, cfg)
    if not st.ok:
        res.untrusted = True
        res.reason = f"{trust.untrusted_reason(st)}, so its required verifiers cannot be judged"
        res.fix = "git ckpt trust (after reviewing git ckpt trust --show)"
        return res
    found = local_filters(repo, cfg, tree)
    if found:
        res.reason = _filter_reason(found)
        res.paths = [f"F {path_display(p)}" for p, _ in found[:SHOW_PATHS]]
        res.count = len(found)
        res.fix = FILTER_FIX
        return res
    oid = repo.read_ref(store.promoted_ref(task))
    if oid is None or repo.commit_tree_id(oid) != tree:
        other = promoted_elsewhere(repo, cfg, tree, task)
        if other is not None:
            res.allowed, res.promoted = True, other
            return res
    if oid is None:
        last = store.latest(repo, task)
        res.reason = f"task {task} has no promoted checkpoint"
        if last is not None and last.tree == tree:
            res.fix = f"git ckpt verify {last.id}"
        else:
            res.fix = "git ckpt save && git ckpt verify"
        return res
    cp = store.load(repo, oid, ref=store.promoted_ref(task))
    res.promoted = cp.id
    if not store.is_local(repo, cp):  # a promotion left naming a dropped checkpoint: none holds
        replaced = store.replaced_by(repo, cp)
        if replaced is not None:  # not dropped: its ref names something else
            res.reason = f"the promoted checkpoint {cp.id} of task {task} is damaged: {replaced}"
            res.fix = "git ckpt check --all names the damage; git ckpt save && git ckpt verify promotes another checkpoint"
            return res
        res.reason = f"the promoted checkpoint {cp.id} of task {task} was dropped"
        res.fix = "git ckpt drop --force promoted ends that promotion; git ckpt save && git ckpt verify promotes another"
        return res
    if cp.tree != tree:
        diff = _diff(repo, cp.tree, tree)
        res.count = len(diff)
        res.paths = diff[:SHOW_PATHS]
        res.reason = f"the tree being committed differs from the promoted checkpoint {cp.id} in {len(diff)} path(s)"
        last = store.latest(repo, task)
        if last is not None and last.tree == tree:
            res.fix = f"git ckpt verify {last.id}"
        elif any(d.startswith("D ") and os.path.lexists(os.path.join(repo.workdir, d[2:])) for d in diff):
            # files the verified checkpoint holds (untracked ones are checkpointed too) but the
            # commit leaves out: saving again cannot help while they stay in the worktree (one
            # gone from the worktree too is a deletion a verified save takes in, as the rest)
            res.fix = ("git add the paths marked D (the verified checkpoint has them), or ignore them "
                       "(e.g. in .git/info/exclude) and run git ckpt save && git ckpt verify")
            if any(not d.startswith("D ") for d in diff):  # the other paths need a verified save as they are
                res.fix += "; the paths marked otherwise need git ckpt save && git ckpt verify either way"
        else:
            res.fix = "git ckpt save && git ckpt verify"
        return res
    req = requirement(repo, cfg, cp)
    if not req.satisfied:
        res.failing = dict(req.missing)
        name = next(iter(req.missing))
        forced = " (it was promoted with --force)" if was_forced(repo, task, cp.commit) else ""
        res.reason = f"{why_missing(req)} on the promoted checkpoint {cp.id}{forced}"
        res.fix = f"git ckpt verify {cp.id}" + (" --isolated" if name in req.in_place else "")
        return res
    res.allowed = True
    return res


def local_filters(repo: Repo, cfg: Config, tree: str, scan: tuple[dict[str, bool], bool] | None = None) -> list[tuple[bytes, str]]:
    """``(path, driver)`` for the paths of ``tree`` whose content filter (``filter`` attribute
    with a ``filter.NAME.clean|smudge|process`` driver) this repository itself defines: the
    driver is configured in local, worktree or command-line config, or the attribute could come
    from a file no commit holds (``$GIT_COMMON_DIR/info/attributes``, ``core.attributesFile``).
    Such a filter makes the bytes a verifier ran on (the worktree) differ from the bytes
    committed (clean's output), so a result cannot vouch for the commit.  Empty when ``[gate]
    allow_local_filters`` is set, or no filter driver is configured at all (the usual case:
    nothing else is run)."""
    scan = filter_scan(repo, cfg) if scan is None else scan
    if not scan[0]:
        return []
    drivers, uncommitted = scan
    paths = [e.path for e in repo.ls_tree(tree) if e.mode in (0o100644, 0o100755)]
    if not paths:
        return []
    res = repo.git("check-attr", "-z", "--stdin", "filter", input=b"".join(p + b"\0" for p in paths)).stdout.split(b"\0")
    found = []
    for i in range(0, len(res) - 2, 3):
        value = res[i + 2].decode("utf-8", "surrogateescape")
        if value in ("unspecified", "unset", "set") or value not in drivers:
            continue
        if drivers[value] or uncommitted:
            found.append((res[i], value))
    return found


def filter_scan(repo: Repo, cfg: Config) -> tuple[dict[str, bool], bool]:
    """The configured filter drivers (name → defined in local/worktree/command config) and
    whether an uncommitted attribute source mentions ``filter``; no drivers when ``[gate]
    allow_local_filters`` is set.  Read once per gate or ``verify-commit`` run."""
    if cfg.gate.allow_local_filters:
        return {}, False
    out = repo.git("config", "-z", "--show-scope", "--get-regexp", r"^filter\..*\.(clean|smudge|process)$", check=False).stdout
    fields = out.split(b"\0")
    drivers: dict[str, bool] = {}
    for i in range(0, len(fields) - 1, 2):
        key = fields[i + 1].split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
        name = key[len("filter."):key.rindex(".")]
        local = fields[i] in (b"local", b"worktree", b"command")
        drivers[name] = drivers.get(name, False) or local
    if not drivers:
        return {}, False
    info = repo.common_dir / "info" / "attributes"
    uncommitted = bool(repo.config_get("core.attributesFile"))
    try:
        uncommitted = uncommitted or b"filter" in info.read_bytes()
    except OSError:
        pass
    return drivers, uncommitted


def _filter_reason(found: list[tuple[bytes, str]]) -> str:
    path, name = found[0]
    more = f" (and {len(found) - 1} more path(s))" if len(found) > 1 else ""
    return (f"{path_display(path)!r}{more} goes through content filter {name!r}, defined by this repository's own config or "
            "info/attributes rather than committed .gitattributes: the bytes verified are not the bytes committed")


FILTER_FIX = "remove the filter (git config --unset filter.NAME.clean/smudge/process, .git/info/attributes), or set " + setting("gate", "allow_local_filters", "true")


def promoted_elsewhere(repo: Repo, cfg: Config, tree: str, task: str) -> str | None:
    """The id of the promoted checkpoint of another of this repository's own tasks (``refs/ckpt/
    T/promoted``, never a fetched one) whose tree is ``tree`` and whose required verifiers
    passed by this repository's own results; tasks in name order; None when there is none.  So
    switching task does not block committing a tree another task verified."""
    for ref in store.ckpt_refs(repo, fetched=False):
        if ref.name != "promoted" or ref.task == task or repo.commit_tree_id(ref.oid) != tree:
            continue
        try:
            cp = store.load(repo, ref.oid, ref=ref.ref)
            if store.is_local(repo, cp) and requirement(repo, cfg, cp).satisfied:
                return cp.id
        except (CkptError, KeyError, ValueError):
            continue
    return None


#: How a refused commit in the middle of an operation is finished once the fix is done (the
#: refusal leaves the operation in progress: a refused merge commit keeps MERGE_HEAD).
FINISH = {
    "a merge": ", then finish the merge with git commit (it stays in progress until then)",
    "a cherry-pick": ", then finish it with git cherry-pick --continue",
    "a revert": ", then finish it with git revert --continue",
    "a rebase": ", then finish it with git rebase --continue",
    "a rebase or am": ", then finish it with git am --continue (or git rebase --continue)",
}


def gate(repo: Repo, cfg: Config | None = None, *, index_file: str | None = None, task: str | None = None,
         record: bool = True, merging: bool = False) -> GateResult:
    """The pre-commit decision for the index in ``index_file`` (the CLI passes
    ``$GIT_INDEX_FILE``; None: the real index).  Disabled gates allow everything.  A refusal is
    logged as a ``gate-refused`` event when ``record``."""
    task = task or store.current_task(repo)
    if not enabled(repo):
        return GateResult(True, False, task)
    cfg = cfg or config.load(repo)
    tree = index_tree(repo, index_file)
    res = check_tree(repo, cfg, tree, task)
    if not res.allowed and res.fix:
        # pre-merge-commit runs before git writes MERGE_HEAD (``merging``: the hook says so)
        res.fix += FINISH.get("a merge" if merging else repo.in_progress() or "", "")
    if not res.allowed and record:
        ledger.append(repo, task, "gate-refused", {
            "reason": res.reason, "tree": tree, "promoted": res.promoted, "paths": res.paths,
            "count": res.count, "failing": res.failing, "fix": res.fix,
        })
    return res


_TRAILER_LINE = re.compile(rb"(?i)ckpt-verified[ \t]*:")


def strip_trailers(text: bytes) -> bytes:
    """``text`` without any ``Ckpt-Verified`` trailer line: the key case-insensitive, blanks
    allowed before the colon, folded continuation lines (starting with a blank) with it — as
    git's trailer parser reads them.  Lines elsewhere in the message that match are removed
    too (a trailer is only evidence when the gate wrote it)."""
    out: list[bytes] = []
    dropping = False
    for line in re.split(rb"(?<=\n)", text):
        if dropping and line[:1] in (b" ", b"\t") and line.rstrip(b"\n").strip(b" \t"):
            continue
        dropping = bool(_TRAILER_LINE.match(line))
        if not dropping:
            out.append(line)
    return b"".join(out)


def set_trailer(repo: Repo, message_file: str, value: str | None) -> bool:
    """Make ``message_file`` carry exactly one ``Ckpt-Verified: VALUE`` trailer (``git
    interpret-trailers --in-place``), or none when ``value`` is None: every trailer already
    there is removed first (a message reused by ``--amend``, ``-C``, rebase or cherry-pick
    keeps the old one otherwise).  Returns whether the trailer was added.

    A message that is still empty (only comment lines: the editor is about to open) gets no
    trailer, so that an empty message still aborts the commit as git intends.
    """
    try:
        with open(message_file, "rb") as fh:
            text = fh.read()
    except OSError:
        return False
    stripped = strip_trailers(text)
    if value is not None and stripped and not stripped.endswith(b"\n"):
        stripped += b"\n"  # git merge -m leaves MERGE_MSG without one: the trailer would join the last paragraph
    if stripped != text:
        from .store import atomic_write

        atomic_write(message_file, stripped)
    if value is None:
        return False
    if not any(ln.strip() and not ln.lstrip().startswith(b"#") for ln in stripped.splitlines()):
        return False
    repo.git("interpret-trailers", "--in-place", "--trailer", f"{TRAILER}: {value}", os.path.abspath(message_file))
    return True


# ------------------------------------------------------------------------------ verify-commit


@dataclass
class CommitVerdict:
    """:func:`verify_commit`'s answer for one commit: ``verified``; the ``checkpoint`` whose
    results back it (``promoted`` when it is a promoted one: promoted here, or on its remote for
    ``REMOTE:T/N``); otherwise ``reason``, and ``fix`` (the command that records the missing
    results) when a checkpoint has the tree."""

    rev: str
    commit: str
    tree: str
    verified: bool
    checkpoint: str | None = None
    promoted: bool = False
    reason: str = ""
    fix: str = ""
    failing: dict[str, str] = field(default_factory=dict)
    foreign: list[str] = field(default_factory=list)
    in_place: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"rev": self.rev, "commit": self.commit, "tree": self.tree, "verified": self.verified,
                "checkpoint": self.checkpoint, "promoted": self.promoted, "reason": self.reason,
                "fix": self.fix, "failing": self.failing}


def _candidates(repo: Repo) -> list[tuple[str, str, bool]]:
    """``(checkpoint id, commit, is promoted ref)`` for every local and fetched checkpoint ref
    whose names git ckpt accepts (:func:`git_ckpt.store.ckpt_refs`: a teammate's ref named
    ``$(…)`` is no checkpoint, and never named in a verdict or its hint); promoted refs first."""
    out = [(c.id, c.oid, c.name == "promoted") for c in store.ckpt_refs(repo) if c.name != "log"]
    out.sort(key=lambda c: (not c[2], c[0]))
    return out


def promoted_name(repo: Repo, cid: str, commit: str, manifest_id: str) -> str:
    """The id a verdict names for checkpoint ``cid`` at ``commit`` (``T/N``, ``REMOTE:T/N``, or a
    promoted ref ``[REMOTE:]T/promoted``): :func:`git_ckpt.store.promoted_id` for a promoted
    ref, else ``cid``.  Every id returned resolves to ``commit``."""
    head, _, last = cid.rpartition("/")
    return store.promoted_id(repo, head, commit, manifest_id) if last == "promoted" else cid


class Judge:
    """Answers :func:`verify_commit` for many commits at once (a range, a push): the checkpoint
    refs are read and their trees looked up once.  ``cfg`` is the configuration whose required
    verifiers judge (never verified while it is untrusted)."""

    def __init__(self, repo: Repo, cfg: Config) -> None:
        self.repo, self.cfg = repo, cfg
        self.trust = trust.state(repo, cfg)
        self._by_tree: dict[str, list[tuple[str, str]]] | None = None
        self._promoted: set[str] = set()
        self._cache: dict[str, CommitVerdict] = {}
        self._filters: tuple[dict[str, bool], bool] | None = None

    def _index(self) -> dict[str, list[tuple[str, str]]]:
        if self._by_tree is None:
            by_tree: dict[str, list[tuple[str, str]]] = {}
            seen: set[str] = set()
            for cid, oid, is_p in _candidates(self.repo):
                if is_p:
                    self._promoted.add(oid)
                if oid in seen:
                    continue
                seen.add(oid)
                tree = self.repo.commit_tree_id(oid)
                if tree is not None:
                    by_tree.setdefault(tree, []).append((cid, oid))
            self._by_tree = by_tree
        return self._by_tree

    def commit(self, rev: str, commit: str, tree: str) -> CommitVerdict:
        """The verdict for ``commit`` (named ``rev`` in the answer), whose tree is ``tree``."""
        cached = self._cache.get(tree)
        if cached is not None:
            return CommitVerdict(rev, commit, tree, cached.verified, cached.checkpoint, cached.promoted,
                                 cached.reason, cached.fix, dict(cached.failing), list(cached.foreign),
                                 list(cached.in_place))
        verdict = CommitVerdict(rev, commit, tree, False)
        if not self.trust.ok:
            verdict.reason = f"{trust.untrusted_reason(self.trust)}, so its required verifiers cannot be judged"
            return verdict
        if self._filters is None:
            self._filters = filter_scan(self.repo, self.cfg)
        found = local_filters(self.repo, self.cfg, tree, self._filters)
        if found:
            verdict.reason = _filter_reason(found)
            self._cache[tree] = verdict
            return verdict
        for cid, oid in self._index().get(tree, []):
            try:
                cp = store.load(self.repo, oid, id=cid)
                req = requirement(self.repo, self.cfg, cp)
            except (CkptError, KeyError, ValueError):
                continue
            name = promoted_name(self.repo, cid, oid, cp.manifest.id)
            if req.satisfied:
                verdict.verified = True
                verdict.checkpoint = name
                verdict.promoted = oid in self._promoted
                break
            if not verdict.failing:
                verdict.checkpoint = name
                verdict.failing = dict(req.missing)
                verdict.foreign = list(req.foreign)
                verdict.in_place = list(req.in_place)
                verdict.reason = f"checkpoint {name} has this tree, but {why_missing(req)}"
                # isolated: runs whatever the worktree holds, and is the run that counts where [gate] isolated is on
                verdict.fix = f"git ckpt verify {name} --isolated"
        if not verdict.verified:
            if not verdict.checkpoint:
                verdict.reason = "no checkpoint has this tree"
        self._cache[tree] = verdict
        return verdict


def is_range(rev: str) -> bool:
    """Whether ``rev`` names a set of commits (``A..B``, ``A...B``, ``^A``, ``A^!``, ``A^@``,
    ``A^-``) rather than one commit, as ``git rev-list`` reads it."""
    return ".." in rev or rev.startswith("^") or rev.endswith(("^!", "^@")) or bool(re.search(r"\^-[0-9]*$", rev))


def commits_of(repo: Repo, revs: list[str]) -> list[tuple[str, str, str]]:
    """``(name, commit, tree)`` for ``revs``: each one commit (named as given), or, when any is
    a range (:func:`is_range`), every commit ``git rev-list REVS`` lists (newest first, each
    named by its id), so ``^A B`` works as two arguments too.  Raises :class:`NotFoundError`
    for an unknown revision or range."""
    if any(is_range(r) for r in revs):
        proc = repo.git("rev-list", "--end-of-options", *revs, "--", check=False)
        if proc.returncode != 0:
            raise NotFoundError(f"unknown revision or range {' '.join(revs)!r}", "name commits, e.g. HEAD or origin/main..HEAD")
        out = []
        for c in proc.stdout.decode().split():
            tree = repo.commit_tree_id(c)
            if tree is not None:
                out.append((c, c, tree))
        return out
    out = []
    for rev in revs:
        one = repo.commit_of(rev)
        tree = repo.commit_tree_id(one) if one else None
        if one is None or tree is None:
            raise NotFoundError(f"unknown revision {rev!r}", "name a commit, e.g. HEAD or a branch")
        out.append((rev, one, tree))
    return out


def verify_commit(repo: Repo, cfg: Config, rev: str) -> CommitVerdict:
    """Was the tree of commit ``rev`` the content of a checkpoint whose required verifiers (as
    ``cfg`` defines them now) all passed, by results this repository's own ``verify`` recorded?
    Never verified while ``cfg`` is untrusted (the CLI refuses that with exit 9 first).  Raises
    :class:`NotFoundError` for an unknown revision.  Ranges: :func:`commits_of` and
    :class:`Judge`."""
    name, commit, tree = commits_of(repo, [rev])[0]
    return Judge(repo, cfg).commit(name, commit, tree)


#: Remote refs the pre-push hook leaves alone: checkpoints and notes (``git ckpt push``, or a
#: ``--mirror`` push) and the stash are not history.
SKIPPED_REMOTE_REFS = ("refs/ckpt/", "refs/ckpt-remotes/", "refs/notes/")


def since_commit(repo: Repo, since: str) -> str:
    """The commit ``ckpt.gate.since`` (``since``) names: history it contains is exempt from the
    gate (what ``hooks install`` sets).  Raises :class:`ConfigError` (exit 6) when it names no
    commit here."""
    from .errors import ConfigError

    found = repo.commit_of(since)
    if found is None:
        raise ConfigError(f"ckpt.gate.since names {since!r}, which is not a commit here",
                          "git config ckpt.gate.since REV (git ckpt hooks install --since REV), or unset it")
    return found


def pushed_commits(repo: Repo, lines: bytes, remote: str | None, since: str | None = None) -> list[str]:
    """The commits a push sends, from pre-push hook input (``<local ref> SP <local object id>
    SP <remote ref> SP <remote object id>`` lines, whatever the refspec: ``HEAD``, ``A:B``,
    ``--all``, ``--mirror``, tags): ``git rev-list LOCAL... --not --remotes=REMOTE REMOTE_OID...
    SINCE``, newest first, each once.  Deletions (an all-zero local id), objects that are not
    commits (a tag of a tree) and pushes to ``refs/ckpt/*``, ``refs/ckpt-remotes/*``,
    ``refs/notes/*`` and ``refs/stash`` are skipped; ``since`` (``ckpt.gate.since``) exempts its
    ancestors.  Raises :class:`ConfigError` when ``since`` names no commit."""
    tips: list[str] = []
    exclude: list[str] = []
    for raw in lines.splitlines():
        parts = raw.decode("utf-8", "replace").split(" ")
        if len(parts) != 4:
            continue
        _lref, lsha, rref, rsha = parts
        if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", lsha) or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", rsha):
            continue
        if set(lsha) == {"0"} or rref.startswith(SKIPPED_REMOTE_REFS) or rref == "refs/stash":
            continue
        c = repo.commit_of(lsha)
        if not c:
            continue
        tips.append(c)
        if set(rsha) != {"0"} and (r := repo.commit_of(rsha)):
            exclude.append(r)
    if not tips:
        return []
    if since:
        exclude.append(since_commit(repo, since))
    args = ["rev-list", *tips, "--not", f"--remotes={remote}" if remote else "--remotes", *exclude, "--"]
    return repo.git(*args).stdout.decode().split()
