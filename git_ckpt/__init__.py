"""git ckpt: checkpoint a Git working tree into hidden refs and restore it exactly.

The library can be used without the CLI::

    from git_ckpt.gitcore import Repo
    from git_ckpt import config, store
    from git_ckpt.snapshot import save
    from git_ckpt.restore import restore

    repo = Repo.discover(".")
    res = save(repo, config.load(repo), task="fix-auth", message="before refactor")
    restore(repo, config.load(repo), store.resolve(repo, res.id), task="fix-auth")
"""

__version__ = "0.1.0"
