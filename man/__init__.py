"""The man page (``git-ckpt.1``) shipped inside the package, so ``git ckpt help`` always has it."""
