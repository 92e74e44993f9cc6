"""Assemble man/git-ckpt.1 from man/parts/*.roff (sorted by name).  Run: python man/build.py"""

from pathlib import Path

HERE = Path(__file__).parent


def build() -> bytes:
    """The man page bytes: every part, in file-name order."""
    return b"".join(p.read_bytes() for p in sorted((HERE / "parts").glob("*.roff")))


if __name__ == "__main__":
    (HERE / "git-ckpt.1").write_bytes(build())
