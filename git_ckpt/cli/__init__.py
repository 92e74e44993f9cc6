"""The click layer: parse arguments, read the environment, print.  Nothing else lives here.

Each subcommand is ``git_ckpt/cli/cmd_<name>.py`` exposing ``command``; modules are imported
only when their command runs, so ``git ckpt gate`` and ``git ckpt list`` pay for nothing else.
One handler (:func:`main`) turns every :class:`~git_ckpt.errors.CkptError` into
``error: …``/``hint: …`` and its exit code, and any other exception into exit 70 with a log.
"""

from __future__ import annotations

import errno
import importlib
import io
import os
import sys
from typing import TYPE_CHECKING, Any, Callable

import click

from ..errors import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    CkptError,
    IOFailure,
    UsageError,
)

if TYPE_CHECKING:
    from ..config import Config
    from ..gitcore import Repo

SCHEMA = "ckpt/1"
# Commands whose long operations show progress on a terminal (never the ones hooks run).
PROGRESS_COMMANDS = frozenset({"restore", "undo", "check", "gc", "push", "fetch", "attempt"})
_HERE = os.path.dirname(__file__)


class LazyGroup(click.Group):
    """A group whose subcommands are the ``cmd_*.py`` modules beside this file."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(
            name[4:-3].replace("_", "-")
            for name in os.listdir(_HERE)
            if name.startswith("cmd_") and name.endswith(".py")
        )

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if not cmd_name.replace("-", "").isalnum():
            return None
        try:
            mod = importlib.import_module(f"{__name__}.cmd_{cmd_name.replace('-', '_')}")
        except ModuleNotFoundError:
            return None
        cmd = getattr(mod, "command", None)
        if cmd is not None:
            require_utf8(cmd)
            whole_summaries(cmd)
        return cmd

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        """As click's, but an unknown command gets "did you mean …?" from every command here
        (click only looks at commands it has already imported)."""
        name = click.utils.make_str(args[0])
        if self.get_command(ctx, name) is None and not name.startswith("-") and not ctx.resilient_parsing:
            raise click.exceptions.NoSuchCommand(name, possibilities=self.list_commands(ctx), ctx=ctx)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None:
                whole_summaries(cmd)
        super().format_commands(ctx, formatter)


def summary(help_text: str | None) -> str:
    """The first sentence of a docstring, whole (click would cut it at 45 characters with
    ``...``): the text up to the first ``. `` or the end of the first paragraph."""
    import re

    para = " ".join((help_text or "").strip().split("\n\n", 1)[0].split())
    end = re.search(r"(?<!\be\.g)(?<!\bi\.e)[.!?]\s+(?=[A-Z`])", para)  # not "i.e. the", "e.g. a"
    return para if end is None else para[: end.start() + 1]


def _complete_checkpoint(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Checkpoint names for shell completion: ``@``, ``promoted``, every ``T/N`` and fetched
    ``R:T/N`` (names only: nothing is loaded).  A ref whose task is no valid task name (a
    fetched ref is named by the remote: ``$(...)`` is a valid ref name) is never offered: the
    shell would insert, and bash's ``compgen -W`` may expand, what it holds."""
    from .. import store

    try:
        repo = open_repo()
        names = ["@", "@~1", "promoted"]
        # this repository's checkpoints, then fetched ones; by task, then number
        names += [c.id for c in sorted((c for c in store.ckpt_refs(repo) if c.number is not None),
                                       key=lambda c: (c.remote is not None, c.remote or "", c.task, c.number or 0))]
    except Exception:  # noqa: BLE001 - completion never fails the shell
        return []
    return [n for n in names if n.startswith(incomplete)]


def _complete_task(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Task names of this repository for shell completion, sorted: every task with a ref and
    this worktree's current task (which exists before its first save)."""
    from .. import store

    try:
        repo = open_repo()
        return [t for t in sorted({*store.tasks(repo), store.current_task(repo)}) if t.startswith(incomplete)]
    except Exception:  # noqa: BLE001
        return []


def _complete_any_task(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Task names for shell completion where a fetched task is accepted too: this repository's
    tasks (:func:`_complete_task`), then every ``REMOTE:T`` fetched
    (:func:`git_ckpt.store.fetched_tasks`), sorted by task and remote."""
    from .. import store

    try:
        theirs = [f"{r}:{t}" for t, rs in store.fetched_tasks(open_repo()).items() for r in rs]
    except Exception:  # noqa: BLE001
        return []
    return _complete_task(ctx, param, incomplete) + [t for t in theirs if t.startswith(incomplete)]


# The commands that read a task fetched from a teammate (REMOTE:T) as well as one of this
# repository (store.existing_task(..., fetched=True)); `show` is `task show`.
VIEWS_OF_FETCHED = frozenset({"list", "log", "handoff", "stats", "report", "check", "show"})


def _add_completers(cmd: click.Command) -> None:
    for p in cmd.params:
        if getattr(p, "_custom_shell_complete", None) is not None:
            continue
        if isinstance(p, click.Argument) and p.name in ("ckpt", "ckpts", "ckpt2"):
            p._custom_shell_complete = _complete_checkpoint
        elif p.name in ("task", "task_option") or (isinstance(p, click.Argument) and p.name == "name" and cmd.name in ("show", "done", "note")):
            p._custom_shell_complete = _complete_any_task if cmd.name in VIEWS_OF_FETCHED else _complete_task


def whole_summaries(cmd: click.Command) -> None:
    """Give ``cmd`` and its subcommands a ``short_help`` that is their whole first sentence, so
    ``git ckpt -h`` and ``git ckpt task -h`` list summaries that are never cut mid-sentence.

    A group's help says ``{commands}`` where its subcommands are listed: they are filled in from
    the group itself (in the order they are defined), so a new subcommand is never left out."""
    if isinstance(cmd, click.Group) and cmd.help and "{commands}" in cmd.help:
        cmd.help = cmd.help.replace("{commands}", ", ".join(cmd.commands))
    if not cmd.short_help and cmd.help:
        cmd.short_help = summary(cmd.help)
    _add_completers(cmd)
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            whole_summaries(sub)


class Utf8Text(click.types.StringParamType):
    """A text parameter that must be valid UTF-8 (everything git ckpt stores is UTF-8 JSON).

    On POSIX, click decodes argv with ``surrogateescape``, so bytes that are not UTF-8 arrive as
    lone surrogates; those are refused with :class:`~git_ckpt.errors.UsageError` (exit 2, one
    ``error:`` line naming the option) instead of failing later while encoding."""

    name = "text"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        value = super().convert(value, param, ctx)
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                from ..errors import UsageError

                raise UsageError(f"{param_name(param)} is not valid UTF-8 text",
                                 "git ckpt stores text as UTF-8: convert it first (e.g. with iconv -t UTF-8)") from None
        return value


UTF8_TEXT = Utf8Text()


class _Checked(click.types.StringParamType):
    """A text option read by one of config's parsers (a duration, a size): a value the parser
    refuses is a usage error (exit 2) naming the option, checked before anything runs; the
    value itself is passed on unchanged."""

    def __init__(self, name: str, parse: str) -> None:
        self.name = name
        self._parse = parse

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        value = super().convert(value, param, ctx)
        from .. import config
        from ..errors import ConfigError

        try:
            getattr(config, self._parse)(value, param_name(param))
        except ConfigError as exc:
            raise UsageError(exc.message, exc.hint) from None
        return value


DURATION = _Checked("duration", "parse_duration")
SIZE = _Checked("size", "parse_size")


def param_name(param: click.Parameter | None) -> str:
    """How the user wrote a parameter: its longest option name (``--message``), or an
    argument's metavar (``CKPT``)."""
    if param is None:
        return "an argument"
    if isinstance(param, click.Option) and param.opts:
        return max(param.opts, key=len)
    return param.human_readable_name


def require_utf8(cmd: click.Command) -> None:
    """Make every plain-text option of ``cmd`` (and of its subcommands), and every single-value
    text argument, a :class:`Utf8Text`.  Variadic arguments (paths after ``--``, the command of
    ``attempt``, revisions) keep any bytes: paths are stored losslessly, commands are run."""
    for p in cmd.params:
        if type(p.type) is not click.types.StringParamType:
            continue
        if isinstance(p, click.Argument) and p.nargs != 1:
            continue
        p.type = UTF8_TEXT
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            require_utf8(sub)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="git-ckpt", prog_name="git ckpt")
def cli() -> None:
    """git ckpt: checkpoint a Git working tree into hidden refs and restore it exactly.

    Checkpoints live in refs/ckpt/TASK/N of this repository.  `git ckpt help` (or
    `git help ckpt`) opens the manual: storage layout, checkpoint names, exit codes;
    `git ckpt COMMAND -h` gives a command's options.
    """


# ------------------------------------------------------------------------------ helpers


def json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--json`` (machine output: a versioned envelope on stdout)."""
    return click.option("--json", "as_json", is_flag=True, help="Print a JSON envelope instead of text.")(f)


class _Name(click.ParamType[str]):
    """A task or remote name as typed: any text but the empty string, which a shell gives for an
    unset variable (``--task "$TASK"``) and which would otherwise read as "not given" (the
    current task, no remote: ``gc --task ''`` pruning the current task).  Exit 2, one line."""

    name = "text"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "":
            self.fail("must not be empty", param, ctx)
        return value


#: The type of every task and remote name option and argument.
NAME = _Name()


def task_argument(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add an optional TASK argument that may also be given as ``--task T`` (the other views
    of a task take ``--task``), handed to the command as ``task``; both, naming two different
    tasks, is a usage error (exit 2)."""
    import functools

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def both(*args: Any, task: str | None = None, task_option: str | None = None, **kwargs: Any) -> Any:
            if task is not None and task_option is not None and task != task_option:
                from ..errors import UsageError

                raise UsageError(f"two tasks given: {task} and --task {task_option}", "give the task once, as TASK or --task TASK")
            return f(*args, task=task if task is not None else task_option, **kwargs)

        both = click.option("--task", "task_option", default=None, metavar="TASK", type=NAME, help=help)(both)
        return click.argument("task", required=False, type=NAME)(both)

    return decorate


def open_repo(lazy: bool = False) -> Repo:
    """Open the repository of the current directory (``$GIT_DIR`` honoured); ``lazy``: libgit2 is
    loaded only when a method needs it (:meth:`git_ckpt.gitcore.Repo.discover`)."""
    from ..errors import RepoError
    from ..gitcore import Repo

    try:
        cwd = os.getcwd()
    except FileNotFoundError:  # the shell sits in a directory something removed
        raise RepoError("the current directory no longer exists (something removed it)",
                        "cd to a directory of the worktree that exists (its root, say) and run the command again; nothing was changed") from None
    repo = Repo.discover(cwd, os.environ.get("GIT_DIR"), os.environ.get("GIT_WORK_TREE"), lazy=lazy)
    repo.on_wait = lambda holder: warn(f"waiting: {holder}")
    return repo


def jump_config(repo: Repo) -> Config | None:
    """The configuration for a restore or undo: the worktree's, or None with a warning when its
    ``.ckpt.toml`` cannot be read, so the caller uses git config alone
    (:func:`git_ckpt.config.load_without_file`: no overlay but git config's, so nothing is
    deleted as overlay and an ignored file in the way is refused as unsaved): a broken
    ``.ckpt.toml``, perhaps brought by a restore, never keeps the user from going back.  A broken
    ``git config ckpt.*`` still raises :class:`ConfigError` (no state holds that)."""
    from .. import config
    from ..errors import ConfigError

    try:
        return config.load(repo)
    except ConfigError as exc:
        if exc.message.startswith(config.GIT_ORIGIN):
            raise
        warn(f"{exc.message}; going on without it (git config ckpt.* alone: no overlay of its own)")
        return None


def emit(command: str, result: Any, as_json: bool, human: Callable[[], object]) -> None:
    """Print ``result`` as the JSON envelope, or call ``human`` to print text."""
    if as_json:
        from ..model import encode_json

        out = {"schema": SCHEMA, "command": command, "result": result}
        sys.stdout.write(encode_json(out).decode() + "\n")
    else:
        human()


_ARGS: list[str] = []


def after_dashdash() -> list[str]:
    """The arguments given after ``--`` on the command line (paths), or []."""
    return _ARGS[_ARGS.index("--") + 1:] if "--" in _ARGS else []


def warn(text: str) -> None:
    """``warning: text`` on stderr."""
    from ..model import escape

    click.echo(f"warning: {escape(text)}", err=True)


def say(text: str = "") -> None:
    """A line of human output on stdout.  A safety net escapes every control character but
    newline and tab (ESC, BEL, CR, C1: nothing stored can drive the terminal); the renderers
    escape stored strings themselves (:func:`git_ckpt.model.escape`), newlines included."""
    from ..model import escape_controls

    click.echo(escape_controls(text))


# ------------------------------------------------------------------------------ entry point


def _report(exc: CkptError, as_json: bool, command: str) -> int:
    if as_json:
        from ..model import encode_json

        error: dict[str, object] = {"code": exc.code, "message": exc.message, "hint": exc.hint, "exit_code": exc.exit_code}
        if exc.details is not None:
            error["details"] = exc.details
        env = {"schema": SCHEMA, "command": command, "error": error}
        sys.stdout.write(encode_json(env).decode() + "\n")
        return exc.exit_code  # one JSON document on stdout, nothing repeated on stderr
    from ..model import escape

    click.echo(f"error: {escape(exc.message)}", err=True)
    if exc.hint:
        click.echo(f"hint: {escape(exc.hint)}", err=True)
    return exc.exit_code


def _crash_log(text: str) -> str:
    try:
        import platformdirs

        d = platformdirs.user_log_dir("git-ckpt")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "crash.log")
        with open(path, "a") as fh:
            fh.write(text + "\n")
        return path
    except Exception:  # noqa: BLE001 - best effort only
        return "(no log could be written)"


class _ReaderMayLeave(io.RawIOBase):
    """The raw writer under ``sys.stdout``/``sys.stderr`` when they are pipes: once a write finds
    the reader gone (EPIPE: ``git ckpt log | head -1``, ``git commit ... | true`` running the
    gate hook) it and every later write is dropped, so the command runs to its end and exits with
    its own code.  Raising instead stopped the command wherever it was printing, and its exit code
    no longer said its verdict (an unverified commit passed the gate: the hook exited 0).  A pipe
    left non-blocking by whoever made it is waited on, as a blocking one would be (it ended
    the command with exit 120 and output cut at the pipe's 64 KiB)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self.gone = False

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: Any) -> int:
        size: int = memoryview(data).nbytes
        while not self.gone:
            try:
                return os.write(self._fd, data)
            except BrokenPipeError:
                self.gone = True
            except BlockingIOError:  # a reader that set O_NONBLOCK on the pipe: wait until it drains
                import select

                select.select([], [self._fd], [])
        return size


def _keep_going_when_the_reader_leaves() -> None:
    """Put :class:`_ReaderMayLeave` under ``sys.stdout`` and ``sys.stderr`` where each is a
    pipe or socket on its usual descriptor (1, 2), with the same encoding, errors and line
    buffering; other streams (a terminal, a file, a test's capture) are left as they are."""
    import stat

    for name, fd in (("stdout", 1), ("stderr", 2)):
        old = getattr(sys, name)
        try:
            if old is None or old.fileno() != fd:
                continue
            mode = os.fstat(fd).st_mode
        except (OSError, ValueError):  # io.UnsupportedOperation is both
            continue
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            continue
        old.flush()
        stream = io.TextIOWrapper(io.BufferedWriter(_ReaderMayLeave(fd)), encoding=old.encoding, errors=old.errors,
                                  line_buffering=old.line_buffering, write_through=name == "stderr")
        setattr(sys, name, stream)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the CLI and exit with the documented code.  A reader
    that leaves (a closed pipe) changes neither what the command does nor its exit code."""
    _keep_going_when_the_reader_leaves()
    if "_GIT_CKPT_COMPLETE" in os.environ:  # a shell asking for completions (git ckpt completion)
        from click.shell_completion import shell_complete

        sys.exit(shell_complete(cli, {}, "git-ckpt", "_GIT_CKPT_COMPLETE", os.environ["_GIT_CKPT_COMPLETE"]))
    args = list(sys.argv[1:] if argv is None else argv)
    own = args[: args.index("--")] if "--" in args else args  # not the options of `attempt -- CMD`
    if own[:1] == ["--json"] and own[1:2] and own[1] in ("-h", "--help", "--version"):
        args, own = args[1:], own[1:]  # `git ckpt --json -h`: help (and --version) are text, as `CMD -h --json`
    if "--json" in own:
        words = [a for a in own if a != "--json"]
        end, named = command_end(words)
        if end == len(words) and isinstance(named, click.Group):  # `git ckpt --json`, `git ckpt task --json`
            where = " ".join(["git ckpt", *words])
            sys.exit(_report(UsageError(f"{where} needs a command", f"{where} -h lists them"), True, " ".join(words)))
    if own and own[0] == "--json" and len(own) > 1:  # `git ckpt --json CMD ...`: the command's own --json,
        rest = list(own[1:])  # --json goes right after the command's name (at the end, `save -m`
        end, named = command_end(rest)  # would take it as its message); after an unknown command's words
        args = args[1:]
        args.insert(len(rest) if isinstance(named, click.Group) else end, "--json")
        own = args[: args.index("--")] if "--" in args else args
    as_json = "--json" in own
    _ARGS[:] = args
    command = next((a for a in args if not a.startswith("-")), "")
    if command in PROGRESS_COMMANDS and not as_json:
        from .. import progress

        progress.enable(True)
    if argv is None and sys.argv and sys.argv[0].endswith("git-ckpt"):
        from ..manual import ensure_installed  # an editable install has no man page: put it in place

        ensure_installed(sys.argv[0])
    try:
        rv = cli.main(args=args, prog_name="git ckpt", standalone_mode=False)
        code = rv if isinstance(rv, int) else 0
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.exceptions.Abort:
        code = _interrupted(as_json, _name(args))
    except click.exceptions.NoArgsIsHelpError as exc:  # `git ckpt`, `git ckpt task`: the group's help
        click.echo(exc.ctx.get_help())  # asked for by naming only the group: success, as `git help`
        code = 0
    except click.ClickException as exc:  # usage errors: one line and a hint, like every error
        ctx = getattr(exc, "ctx", None)
        where = ctx.command_path if ctx is not None else command_path(args)
        message, suggestion = click_message(exc)
        code = _report(UsageError(message, f"{suggestion + ' ' if suggestion else ''}{where} -h shows the usage"), as_json, _name(args))
    except CkptError as exc:
        if not exc.hint:  # every error has its hint line (README "Exit codes")
            exc.hint = default_hint(exc, args)
        code = _report(exc, as_json, _name(args))
    except KeyboardInterrupt:
        code = _interrupted(as_json, _name(args))
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM, errno.EDQUOT):
            code = _report(IOFailure(f"{exc.strerror}: {exc.filename or ''}".rstrip(": "), "free disk space or fix permissions, then run the command again"), as_json, _name(args))
        else:
            code = _internal(exc, as_json, _name(args))
    except Exception as exc:  # noqa: BLE001 - the one place that catches everything
        code = _internal(exc, as_json, _name(args))
    sys.exit(code)


def default_hint(exc: CkptError, args: list[str]) -> str:
    """The hint of an error raised without one: what to run next for its kind (a usage error:
    the command's usage; damage: ``check``; anything else: ``status``)."""
    from ..errors import CorruptError

    if isinstance(exc, UsageError):
        return f"{command_path(args)} -h shows the usage"
    if isinstance(exc, CorruptError):
        return "git ckpt check --all names every damaged checkpoint; git fsck what is damaged in the object store"
    return "git ckpt status shows where this worktree stands"


def did_you_mean(possibilities: list[str]) -> str:
    """:func:`git_ckpt.words.did_you_mean`: the one wording of every suggestion."""
    from ..words import did_you_mean as wording

    return wording(possibilities)


def click_message(exc: click.ClickException) -> tuple[str, str | None]:
    """A click usage error in git ckpt's words: ``(message, suggestion)``, the message one line
    that starts in lower case without a closing full stop, as every other error does (``no such
    option '--mesage'``, ``option '-m' requires an argument``), click's layout (the newlines and
    tabs of "Choose from:" lists) flattened to single spaces rather than shown escaped; the
    suggestion (:func:`did_you_mean`, or None) for an unknown command or option."""
    import re

    suggestion = None
    if isinstance(exc, (click.exceptions.NoSuchCommand, click.exceptions.NoSuchOption)):
        text = exc.message
        suggestion = did_you_mean(exc.possibilities) if exc.possibilities else None
        ctx = getattr(exc, "ctx", None)
        name = getattr(exc, "option_name", "") or ""
        if ctx is not None and ctx.parent is None and name.startswith("--"):
            from ..words import suggestion as close  # `git ckpt --jsn`: --json is every command's, taken before click

            opts = [o for p in ctx.command.get_params(ctx) if isinstance(p, click.Option) for o in p.opts if o.startswith("--")]
            suggestion = close(name, [*opts, "--json"])
        if suggestion is None and ctx is not None and len(name) == 2 and name[0] == "-":
            other = "-" + name[1].swapcase()  # `save -M`: a short option in the wrong case
            if any(other in p.opts for p in ctx.command.params if isinstance(p, click.Option)):
                suggestion = did_you_mean([other])
    else:
        text = exc.format_message()
        choice = exc.param.type if isinstance(exc, click.BadParameter) and exc.param is not None else None
        typed = re.match(r"'(.*)' is not one of ", exc.message) if isinstance(choice, click.Choice) else None
        if typed and isinstance(choice, click.Choice):  # a mistyped choice (an agent's name): the close ones
            from ..words import suggestion as close

            suggestion = close(typed.group(1), [str(c) for c in choice.choices])
        extra = re.match(r"Got unexpected extra arguments? \((.*)\)$", exc.message, re.S)
        ctx = getattr(exc, "ctx", None)
        if extra and ctx is not None and any("-m" in p.opts for p in ctx.command.params if isinstance(p, click.Option)):
            import shlex  # `git ckpt save "my message"`: the text without its -m

            suggestion = f"did you mean -m {shlex.quote(extra.group(1))}?"
    text = re.sub(r"[ ]*[\n\t][\s]*", " ", text).strip().replace(". Choose from:", "; choose from:")
    if text[:2].istitle():  # "No such ...", "Missing ...", "Got ...": not "'--x' ..." or "SHELL ..."
        text = text[0].lower() + text[1:]
    return text.removesuffix("."), suggestion


def _name(args: list[str]) -> str:
    """The command an error envelope names: the same words its result envelope uses
    (``task start``, ``hooks install``); for a command that does not exist, the word typed
    (``sav``); "" when no command was named."""
    try:
        known = command_path(args).removeprefix("git ckpt").strip()
    except Exception:  # noqa: BLE001 - naming never hides the error itself
        known = ""
    typed = args[: args.index("--")] if "--" in args else args
    words = [a for a in typed if not a.startswith("-")]
    return known or (words[0] if words else "")


def command_end(args: list[str]) -> tuple[int, click.Command]:
    """The index in ``args`` just after the words naming the (sub)command (``task note``), and
    that command: where an option of the command can go without being taken as another
    option's value."""
    cmd: click.Command = cli
    for i, a in enumerate(args):
        if a.startswith("-") or not isinstance(cmd, click.Group):
            return i, cmd
        sub = cmd.get_command(click.Context(cmd), a)
        if sub is None:
            return i, cmd
        cmd = sub
    return len(args), cmd


def command_path(args: list[str]) -> str:
    """``git ckpt save`` / ``git ckpt task start``: the (sub)command ``args`` name, for the hint
    of a usage error click reports without a context (a missing option value, say)."""
    path = ["git ckpt"]
    cmd: click.Command = cli
    for a in args:
        if a == "--":
            break
        if a.startswith("-") or not isinstance(cmd, click.Group):
            continue
        sub = cmd.get_command(click.Context(cmd), a)
        if sub is None:
            break
        path.append(a)
        cmd = sub
    return " ".join(path)


def _interrupted(as_json: bool, command: str) -> int:
    """Ctrl-C: one ``error:`` line and its hint, like every error (exit 130)."""
    err = CkptError("interrupted", "git ckpt status shows where this worktree stands (a restore cut short: "
                                   "git ckpt restore --continue, or git ckpt undo)")
    err.exit_code = EXIT_INTERRUPTED
    err.code = "interrupted"
    return _report(err, as_json, command)


def _internal(exc: BaseException, as_json: bool, command: str) -> int:
    import traceback

    path = _crash_log("".join(traceback.format_exception(exc)))
    err = CkptError(f"internal error: {type(exc).__name__}: {exc}", f"this is a bug in git-ckpt; please report it with {path}")
    err.exit_code = EXIT_INTERNAL
    err.code = "internal"
    return _report(err, as_json, command)
