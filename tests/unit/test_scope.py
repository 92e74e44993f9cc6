"""Which paths a next step names (``git ckpt diff --scope``): whole words, a directory only by
a word ending in ``/`` (walkthrough 27: ``tests/test_login.py`` put every file under
``tests/`` in scope as "next step")."""

from __future__ import annotations

import pytest

from git_ckpt.scope import named_by, naming

STEP = "add a regression test in tests/test_login.py, then fix src/auth.py. Check .env and docs/api/ too"


CASES = [
    ("tests/test_login.py", True),       # the path itself
    ("other/test_login.py", False),      # a path is not its file name elsewhere when written whole
    ("tests/zzz.py", False),             # under a directory a named file is in: not named
    ("tests/test_login.pyc", False),
    ("src/auth.py", True),               # before sentence punctuation
    ("auth.py", False),
    (".env", True),                      # a dot file keeps its dot
    ("env", False),
    ("docs/api/index.md", True),         # under a named directory, at any depth
    ("docs/api/v1/x.md", True),
    ("docs/other.md", False),            # docs/ itself is not named
    ("regression", True),                # a file named as a word
    ("test", True),
]


@pytest.mark.parametrize("path,named", CASES)
def test_named_by(path, named):
    assert named_by(STEP, path) is named


def test_naming_reads_the_text_once_for_every_path():
    """What ``diff --scope`` asks: one test built from the next step, asked of each changed path
    in turn, answers each as ``named_by`` does (and a text with no words names nothing)."""
    names = naming(STEP)
    assert [p for p, _ in CASES if names(p)] == [p for p, named in CASES if named]
    assert [p for p, _ in CASES if naming("... !!! ///")(p)] == []
    assert [p for p, _ in CASES if naming(None)(p)] == []


@pytest.mark.parametrize("text,path,named", [
    ("run the tests", "tests/a.py", False),
    ("run the tests/", "tests/a.py", True),
    ("see ./tests/", "tests/a.py", True),
    ("edit ./src/auth.py", "src/auth.py", True),
    ("edit /src/auth.py", "src/auth.py", True),
    ("", "a", False),
    (None, "a", False),
])
def test_named_by_forms(text, path, named):
    assert named_by(text, path) is named
