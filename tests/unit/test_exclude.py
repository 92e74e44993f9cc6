"""exclude.set_block in process on a real repository: whatever info/exclude held (a last line
without a line break, CRLF, blank lines, lines that look like markers) and whatever sequence of
block updates the hooks and agent owners make, the lines outside the blocks are the user's at
every step and removing both blocks gives the file back byte for byte."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_ckpt import exclude
from git_ckpt.agent import LOCAL_BEGIN, LOCAL_END
from git_ckpt.hooks import EXCLUDE_BEGIN, EXCLUDE_END

OWNERS = [(EXCLUDE_BEGIN, EXCLUDE_END), (LOCAL_BEGIN, LOCAL_END)]
LINE = st.sampled_from(["", "*.log", "# note", "\r", "x\r", " ", "!keep", "/a b", "\x85", "\u2028",
                        EXCLUDE_END, LOCAL_END, EXCLUDE_END + exclude.ADDED_BREAK])
PATTERNS = st.lists(st.sampled_from(["/.hk/pre-commit", "/.claude/settings.local.json", "/x\\*"]), max_size=3, unique=True)


def _outside_blocks(text: str) -> list[str]:
    out, inside = [], None
    for line in text.split("\n"):
        if inside is None and line in (EXCLUDE_BEGIN, LOCAL_BEGIN):
            inside = dict(OWNERS)[line]
        elif inside is not None and line in (inside, inside + exclude.ADDED_BREAK):
            inside = None
        elif inside is None:
            out.append(line)
    return out


@given(lines=st.lists(LINE, max_size=5), final_break=st.booleans(),
       steps=st.lists(st.tuples(st.sampled_from([0, 1]), PATTERNS), max_size=6), last=st.permutations([0, 1]))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_blocks_come_and_go_leaving_the_file_byte_for_byte(core, lines, final_break, steps, last):
    path = core.common_dir / "info" / "exclude"
    original = "\n".join(lines) + ("\n" if final_break and lines else "")
    path.write_bytes(original.encode("utf-8", "surrogateescape"))
    user = _outside_blocks(original)
    for owner, patterns in steps:
        exclude.set_block(core, *OWNERS[owner], patterns)
        now = path.read_bytes().decode("utf-8", "surrogateescape")
        kept = _outside_blocks(now)
        # the user's lines, in order; a trailing "" is where the file's own last line break was
        assert [ln for ln in kept if ln] == [ln for ln in user if ln], (original, now)
    for owner in last:
        exclude.set_block(core, *OWNERS[owner], [])
    assert path.read_bytes() == original.encode("utf-8", "surrogateescape")
