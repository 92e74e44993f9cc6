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
import shutil
from dataclasses import dataclass, field

from . import config, ledger, store, trust
from .config import Config
from .errors import CkptError, NotFoundError
from .evidence import requirement, was_forced
from .gitcore import Repo, change_status
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

    def to_json(self) -> dict:
        """JSON-ready data."""
        return {
            "allowed": self.allowed, "enabled": self.enabled, "task": self.task, "tree": self.tree,
            "promoted": self.promoted, "reason": self.reason, "paths": self.paths, "count": self.count,
            "failing": self.failing, "fix": self.fix, "untrusted": self.untrusted,
        }


def _diff(repo: Repo, old: str, new: str) -> list[str]:
    out = []
    for a, b in repo.diff_trees(old, new):
        letter = change_status(a, b)
        out.append(f"{letter} {path_display((b or a).path)}")
    return out


def check_tree(repo: Repo, cfg: Config, tree: str, task: str) -> GateResult:
    """Judge ``tree`` against the promoted checkpoint of ``task`` (no side effects).  An
    untrusted ``.ckpt.toml`` (:mod:`git_ckpt.trust`) refuses first, with ``untrusted`` set: its
    required verifiers may have been loosened or deleted, so they cannot judge anything."""
    res = GateResult(False, True, task, tree)
    st = trust.state(repo, cfg)
    if not st.ok:
        res.untrusted = True
        res.reason = f"{trust.untrusted_reason(st)}, so its required verifiers cannot be judged"
        res.fix = "git ckpt trust (after reviewing git ckpt trust --show)"
        return res
    oid = repo.read_ref(store.promoted_ref(task))
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
    if cp.tree != tree:
        diff = _diff(repo, cp.tree, tree)
        res.count = len(diff)
        res.paths = diff[:SHOW_PATHS]
        res.reason = f"the tree being committed differs from the promoted checkpoint {cp.id} in {len(diff)} path(s)"
        last = store.latest(repo, task)
        if last is not None and last.tree == tree:
            res.fix = f"git ckpt verify {last.id}"
        else:
            res.fix = "git ckpt save && git ckpt verify"
        return res
    req = requirement(repo, cfg, cp)
    if not req.satisfied:
        res.failing = dict(req.missing)
        name, status = next(iter(req.missing.items()))
        forced = " (it was promoted with --force)" if was_forced(repo, task, cp.commit) else ""
        fetched = " (only a fetched result says passed: not evidence here)" if name in req.foreign else ""
        res.reason = f"required verifier {name} has {'no result' if status == 'no result' else 'status ' + status} on the promoted checkpoint {cp.id}{forced}{fetched}"
        res.fix = f"git ckpt verify {cp.id}"
        return res
    res.allowed = True
    return res


def gate(repo: Repo, cfg: Config | None = None, *, index_file: str | None = None, task: str | None = None,
         record: bool = True) -> GateResult:
    """The pre-commit decision for the index in ``index_file`` (the CLI passes
    ``$GIT_INDEX_FILE``; None: the real index).  Disabled gates allow everything.  A refusal is
    logged as a ``gate-refused`` event when ``record``."""
    task = task or store.current_task(repo)
    if not enabled(repo):
        return GateResult(True, False, task)
    cfg = cfg or config.load(repo)
    tree = index_tree(repo, index_file)
    res = check_tree(repo, cfg, tree, task)
    if not res.allowed and record:
        ledger.append(repo, task, "gate-refused", {
            "reason": res.reason, "tree": tree, "promoted": res.promoted, "paths": res.paths,
            "count": res.count, "failing": res.failing, "fix": res.fix,
        })
    return res


def add_trailer(repo: Repo, message_file: str, value: str) -> bool:
    """Add (or replace) ``Ckpt-Verified: VALUE`` in ``message_file`` with ``git
    interpret-trailers --in-place``; returns whether it did.

    A message that is still empty (only comment lines: the editor is about to open) is left
    alone, so that an empty message still aborts the commit as git intends.
    """
    try:
        with open(message_file, "rb") as fh:
            text = fh.read()
    except OSError:
        return False
    if not any(ln.strip() and not ln.lstrip().startswith(b"#") for ln in text.splitlines()):
        return False
    repo.git("interpret-trailers", "--in-place", "--if-exists", "replace", "--trailer", f"{TRAILER}: {value}",
             os.path.abspath(message_file))
    return True


# ------------------------------------------------------------------------------ verify-commit


@dataclass
class CommitVerdict:
    """:func:`verify_commit`'s answer for one commit: ``verified``; the ``checkpoint`` whose
    results back it (``promoted`` when it is a promoted one); otherwise ``reason``."""

    rev: str
    commit: str
    tree: str
    verified: bool
    checkpoint: str | None = None
    promoted: bool = False
    reason: str = ""
    failing: dict[str, str] = field(default_factory=dict)
    foreign: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        """JSON-ready data."""
        return {"rev": self.rev, "commit": self.commit, "tree": self.tree, "verified": self.verified,
                "checkpoint": self.checkpoint, "promoted": self.promoted, "reason": self.reason,
                "failing": self.failing}


def _candidates(repo: Repo) -> list[tuple[str, str, bool]]:
    """``(checkpoint id, commit, is promoted ref)`` for every local and fetched checkpoint ref."""
    out: list[tuple[str, str, bool]] = []
    for prefix, shown in ((store.PREFIX, ""), (store.REMOTE_PREFIX, None)):
        for name, oid in repo.refs_under(prefix).items():
            rest = name[len(prefix):]
            if shown is None:
                remote, _, rest = rest.partition("/")
                label = f"{remote}:"
            else:
                label = ""
            task, _, last = rest.rpartition("/")
            if last.isdigit():
                out.append((f"{label}{task}/{last}", oid, False))
            elif last == "promoted":
                out.append((f"{label}{task}/promoted", oid, True))
    out.sort(key=lambda c: (not c[2], c[0]))
    return out


def verify_commit(repo: Repo, cfg: Config, rev: str) -> CommitVerdict:
    """Was ``rev``'s tree the content of a checkpoint whose required verifiers (as ``cfg``
    defines them now) all passed, by results this repository's own ``verify`` recorded?  Never
    verified while ``cfg`` is untrusted (the CLI refuses that with exit 9 first).  Raises
    :class:`NotFoundError` for an unknown revision."""
    commit_id = repo.rev_parse_commit(rev)
    if commit_id is None:
        raise NotFoundError(f"unknown revision {rev!r}", "name a commit, e.g. HEAD or a branch")
    tree = str(repo.pg[commit_id].tree_id)
    verdict = CommitVerdict(rev, commit_id, tree, False)
    st = trust.state(repo, cfg)
    if not st.ok:
        verdict.reason = f"{trust.untrusted_reason(st)}, so its required verifiers cannot be judged"
        return verdict
    promoted_commits = {oid for _id, oid, is_p in _candidates(repo) if is_p}
    seen: set[str] = set()
    for cid, oid, _is_p in _candidates(repo):
        if oid in seen:
            continue
        seen.add(oid)
        try:
            if str(repo.pg[oid].tree_id) != tree:
                continue
            cp = store.load(repo, oid, id=cid)
            req = requirement(repo, cfg, cp)
        except (CkptError, KeyError, ValueError):
            continue
        name = cid if not cid.endswith("/promoted") else cp.manifest.id
        if req.satisfied:
            verdict.verified = True
            verdict.checkpoint = name
            verdict.promoted = oid in promoted_commits
            return verdict
        if not verdict.failing:
            verdict.checkpoint = name
            verdict.failing = dict(req.missing)
            verdict.foreign = list(req.foreign)
    if verdict.checkpoint:
        n, status = next(iter(verdict.failing.items()))
        fetched = " (only a fetched result says passed: not evidence here)" if n in verdict.foreign else ""
        verdict.reason = f"checkpoint {verdict.checkpoint} has this tree, but required verifier {n} has {'no result' if status == 'no result' else 'status ' + status}{fetched}"
    else:
        verdict.reason = "no checkpoint has this tree"
    return verdict


def pushed_commits(repo: Repo, lines: bytes, remote: str | None) -> list[str]:
    """The commits a push would send, from pre-push hook input (``<local ref> <local sha>
    <remote ref> <remote sha>`` lines): branch updates only (deletions, tags and ``refs/ckpt``
    pushes are skipped), newest first, each once."""
    zero = repo.zero_oid
    out: list[str] = []
    for raw in lines.splitlines():
        parts = raw.decode("utf-8", "replace").split()
        if len(parts) != 4:
            continue
        lref, lsha, _rref, rsha = parts
        if lsha == zero or not lref.startswith("refs/heads/"):
            continue
        args = ["rev-list", lsha]
        if rsha != zero and repo.object_exists(rsha):
            args.append("^" + rsha)
        else:
            args += ["--not", f"--remotes={remote}" if remote else "--remotes"]
        for c in repo.git(*args).stdout.decode().split():
            if c not in out:
                out.append(c)
    return out
