"""Old spellings of options, kept for one release: each is rewritten to the word every
command now uses (docs/cli.md) and its use is warned on stderr.

The rewrite reads the command words (`image run-args`) and stops at `--`, so the arguments
of a job that `perf -- CMD` runs are never touched.
"""

from __future__ import annotations

# (command words) -> {old option: the one word}
RENAMED: dict[tuple[str, ...], dict[str, str]] = {
    ("fetch",): {"--dest": "--repo"},
    ("doctor",): {"--dry-run": "--check"},
    ("image", "run-args"): {"--devices": "--device"},
    ("image", "validate"): {"--devices": "--device"},
}


def command_words(argv: list[str]) -> tuple[str, ...]:
    """The leading words of a command line (`image`, `run-args`), before its first option."""
    words = []
    for arg in argv:
        if arg.startswith("-"):
            break
        words.append(arg)
    return tuple(words)


def modernize(argv: list[str]) -> tuple[list[str], list[str]]:
    """argv with the old spellings replaced, and a warning for each one that was."""
    words = command_words(argv)
    renames = next((names for command, names in RENAMED.items()
                    if words[:len(command)] == command), {})
    out: list[str] = []
    warnings: list[str] = []
    for index, arg in enumerate(argv):
        if arg == "--":
            return out + argv[index:], warnings
        name, eq, value = arg.partition("=")
        new = renames.get(name)
        if new is None:
            out.append(arg)
            continue
        warnings.append(f"ascend-env: warning: {' '.join(words)} {name} is deprecated and "
                        f"will be removed in the next release; use {new}")
        out.append(f"{new}{eq}{value}")
    return out, warnings
