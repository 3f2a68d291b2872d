"""Bad inputs for every command, and how one run of a command with them is judged.

Shared by tests/hostile/test_bad_input.py (hypothesis picks among them and generates more)
and scripts/bad_input_campaign.py (runs the fixed list through the real console script).
Every argv here is wrong somewhere, so the only right endings are exit 1 (checked, wrong) or
2 (could not run); a traceback, a hang, another code, a changed file outside the run's
folder or an unquoted printed command is a failure. Commands that reach hosts are aimed at
a closed port on 127.0.0.1 (and install runs with --check), so nothing real is touched.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shlex
import stat
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

UNREACHABLE = "ssh://root@127.0.0.1:1"  # port 1: nothing listens, refused at once
CLOSED_URL = "http://127.0.0.1:1/"
TRACEBACK = "Traceback (most recent call last)"

# -- bad files --------------------------------------------------------------------------------

BILLION_LAUGHS = "\n".join(
    ["a: &a [x, x, x, x, x, x, x, x, x]"]
    + [f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
       f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
       f"*{chr(97 + i)}]" for i in range(8)]) + "\n"


def make_bad_files(folder: Path) -> dict[str, Path]:
    """Files of every bad kind, made in FOLDER; name -> path (some outside it: /dev/zero)."""
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}

    def text(name: str, body: str | bytes) -> None:
        path = folder / name
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body, encoding="utf-8", errors="surrogateescape")
        files[name] = path

    text("empty.yaml", "")
    text("garbage.bin", bytes(range(256)) * 8)
    text("not-yaml.yaml", "name: [unclosed\n  - : :\n\t\x00")
    text("list.yaml", "- a\n- b\n")
    text("scalar.yaml", "42\n")
    text("bomb.yaml", BILLION_LAUGHS)
    text("deep.yaml", "a: " + "[" * 5000 + "]" * 5000 + "\n")
    text("dupkeys.yaml", "name: a\nname: b\nschema: ascend-env/spec/v1\n")
    text("shell-values.yaml", "schema: ascend-env/spec/v1\nname: x\nprofile: 910b\n"
         "python:\n  venv: $(pwned)\ninstall:\n  path: \"/opt/a\\npwned\"\n")
    text("wrong-types.yaml", "schema: ascend-env/spec/v1\nname: 5\nhardware:\n  devices: true\n"
         "threads: {omp_num_threads: nan}\n")
    text("utf16.yaml", "name: x\n".encode("utf-16"))
    text("latin1.yaml", b"name: caf\xe9\n")
    text("not-json.json", "{\"schema\": ")
    text("capture-wrong.json", "{\"schema\": \"ascend-env/capture/v1\", \"host\": 5}")
    text("capture-list-empty.json", "[]")
    text("gzip-bomb.json.gz", gzip.compress(b" " * (64 << 20)))  # 64 MiB of spaces, 64 KB
    text("gzip-broken.json.gz", gzip.compress(b"{\"a\": 1}")[:-6])
    text("inventory-bad.ini", "[all\nhost ansible_host=\n")
    text("inventory-yaml.yaml", "all:\n  hosts:\n    x: {ansible_host: 127.0.0.1, "
         "ansible_port: 1}\n  children: 5\n")
    text("overlay-bad.json", "{\"files\": [{\"url\": \"http://[::1/x\", \"sha256\": \"zz\"}]}")
    text("overlay-list.json", "[1, 2, 3]")
    zpath = folder / "slip.zip"
    with zipfile.ZipFile(zpath, "w") as archive:
        archive.writestr("../../escape.run", "#!/bin/sh\necho escaped\n")
    files["slip.zip"] = zpath
    fifo = folder / "fifo"
    os.mkfifo(fifo)
    files["fifo"] = fifo
    sub = folder / "a-directory"
    sub.mkdir()
    files["a-directory"] = sub
    loop = folder / "loop"
    loop.symlink_to(loop)
    files["loop"] = loop
    files["missing"] = folder / "no-such-file.yaml"
    files["dev-zero"] = Path("/dev/zero")
    files["proc"] = Path("/proc/self/status")
    repo = folder / "repo-file"  # a file where a repository folder is expected
    repo.write_text("x")
    files["repo-file"] = repo
    return files


# -- bad values -------------------------------------------------------------------------------

# Every hostile value that could reach a printed command carries this word: were it ever
# split out as a command of its own, the line is unsafe (a real hint may well say "reboot").
MARK = "pwned"
NAMES = ["", " ", "-", "--", "../../etc/passwd", "910b;pwned", "$(pwned)", "\x00", "\n",
         "9" * 300, "\uff4e\uff50\uff55", "910B\u200b", "a" * 5000]
NUMBERS = ["nan", "inf", "-inf", "0", "-5", "1e999", "x", "٣", "9" * 400, "", "0x10", "1_0"]
DEVICES = ["0-999999999", "9" * 5000, "٣", "3-1", "0,0,0", "x", "", "-1", "npu:-1",
           "npu:99999999999", "cuda:x", "all,0", "0--1"]
URLS = ["http://[::1", "http://host:99999/", "ftp://x/", "http://a b/", "javascript:x", "",
        "http://", "http://127.0.0.1:1/\r\nHost: x", "file:///etc/passwd", "http://[fe80::1%/"]
HOSTS = ["", " ", "ssh://", "docker://", "-oProxyCommand=pwned", "ssh://root@[::1:1",
         "ssh://root@127.0.0.1:99999", "local://x", UNREACHABLE, "a\nb", "ssh://-oProxyCommand=x"]
SIZES = ["-1 ; reboot", "-1 ; pwned", "$(pwned)", "0", "16x", "16 g", "", "9" * 40, "-16g"]


@dataclass(frozen=True)
class Case:
    """One command line to run, what class of bad input it carries, and the files it names."""

    kind: str  # files, urls, archives, inventories, numbers, names, output paths
    argv: tuple[str, ...]

    def shown(self) -> str:
        return shlex.join(["ascend-env", *self.argv])


def cases(files: dict[str, Path], out: Path, capture: Path) -> Iterator[Case]:
    """The campaign's fixed list (the hypothesis test draws from the same pools); CAPTURE is
    a good capture file, for the side files of a doctor that ran."""
    paths = [str(p) for p in files.values()]
    spec_files = [str(p) for n, p in files.items() if not n.startswith(("capture", "gzip"))]
    for path in spec_files:
        yield Case("files", ("spec", "validate", path))
        yield Case("files", ("plan", "--spec", path))
        yield Case("files", ("image", "run-args", "--device", "0", "--spec", path))
        yield Case("files", ("doctor", "--spec", path, "--host", UNREACHABLE))
        yield Case("files", ("fetch", "--spec", path, "--repo", str(out / "repo"),
                             "--mirror", CLOSED_URL))
    for path in paths:
        yield Case("files", ("doctor", "--from", path))
        yield Case("inventories", ("doctor", "--inventory", path))
        yield Case("inventories", ("collect", "-o", str(out / "c.json"), "--inventory", path))
        yield Case("inventories", ("install", "--profile", "910b", "--inventory", path,
                                   "--repo", str(out / "no-repo"), "--check"))
        yield Case("files", ("fetch", "--profile", "910b", "--repo", str(out / "repo"),
                             "--catalogue", path, "--mirror", CLOSED_URL))
        yield Case("files", ("install", "--profile", "910b", "--host", UNREACHABLE,
                             "--repo", path, "--check"))
        yield Case("output paths", ("collect", "-o", path, "--host", UNREACHABLE))
        yield Case("output paths", ("image", "build", "--profile", "910b", "--context", path,
                                    "--repo", str(out / "no-repo")))
    yield Case("archives", ("fetch", "--profile", "910b", "--repo", str(out / "repo"),
                            "--from-dir", str(files["slip.zip"].parent), "--mirror", CLOSED_URL))
    for path in ("/dev/full", "/proc/x.json", "/sys/x.json", str(out), str(out / "no/x.json")):
        yield Case("output paths", ("collect", "-o", path, "--host", UNREACHABLE))
        yield Case("output paths", ("doctor", "--from", str(capture), "--junit", path))
        yield Case("output paths", ("doctor", "--from", str(capture), "--prometheus", path))
        yield Case("output paths", ("image", "build", "--profile", "910b", "--context", path,
                                    "--repo", str(out / "no-repo")))
    for url in URLS:
        yield Case("urls", ("fetch", "--profile", "910b", "--repo", str(out / "repo"),
                            "--mirror", url))
        yield Case("urls", ("fetch", "--profile", "910b", "--repo", str(out / "repo"),
                            "--python-wheels", "--index-url", url, "--mirror", CLOSED_URL))
    for host in HOSTS:
        yield Case("names", ("doctor", "--host", host))
        yield Case("names", ("collect", "-o", str(out / "c.json"), "--host", host))
        yield Case("names", ("smoke", "--host", host, "--device", "cpu", "--timeout", "5"))
        yield Case("names", ("install", "--profile", "910b", "--host", host, "--repo",
                             str(out / "no-repo"), "--check"))
    for name in NAMES:
        yield Case("names", ("profiles", "show", name))
        yield Case("names", ("plan", "--profile", name))
        yield Case("names", ("matrix", "--cann", name))
        yield Case("names", ("doctor", "--only", name, "--host", UNREACHABLE))
        yield Case("names", ("image", "validate", name or "x", "--builder", "docker"))
        yield Case("names", ("image", "run-args", "--device", "0", "--image", name))
        yield Case("names", ("install", "--profile", "910b", "--components", name or ",",
                             "--host", UNREACHABLE, "--repo", str(out / "no-repo"), "--check"))
    for number in NUMBERS:
        yield Case("numbers", ("smoke", "--timeout", number, "--host", UNREACHABLE))
        yield Case("numbers", ("smoke", "--steps", number, "--host", UNREACHABLE))
        yield Case("numbers", ("doctor", "--level", number, "--host", UNREACHABLE))
        yield Case("numbers", ("install", "--profile", "910b", "--serial", number, "--host",
                               UNREACHABLE, "--repo", str(out / "no-repo"), "--check"))
        yield Case("numbers", ("image", "build", "--profile", "910b", "--gid", number,
                               "--repo", str(out / "no-repo")))
    for devices in DEVICES:
        yield Case("numbers", ("image", "run-args", "--device", devices, "--profile", "910b"))
        yield Case("numbers", ("smoke", "--device", devices, "--host", UNREACHABLE))
    for size in SIZES:
        yield Case("numbers", ("image", "run-args", "--device", "0", "--shm-size", size))


# -- judging one run --------------------------------------------------------------------------

@dataclass
class Verdict:
    """What went wrong with one run (empty: it ended as a bad input should)."""

    case: Case
    code: int | None  # None: it did not end within the bound
    problems: list[str] = field(default_factory=list)


def runs_something(text: str) -> bool:
    """Would a shell given TEXT run the MARK command of its own or a substitution? A word
    that is exactly MARK after splitting on blanks and operators (`;`, `&&`, `|`, newline), or
    `$(` / a backquote outside single quotes."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        if MARK in list(lexer):
            return True
    except ValueError:  # an unclosed quote: a shell would wait for more, not run this
        return True
    # sh's quoting: nothing is special inside '...'; inside "..." and bare, $( and ` run.
    state, i = "bare", 0
    while i < len(text):
        char = text[i]
        if state == "single":
            state = "bare" if char == "'" else state
        elif char == "\\":
            i += 1  # the next character is taken as it is
        elif char == "`" or text.startswith("$(", i):
            return True
        elif char == "'" and state == "bare":
            state = "single"
        elif char == '"':
            state = "bare" if state == "double" else "double"
        i += 1
    return False


def unsafe_printed(out: str) -> list[str]:
    """Printed lines meant to paste (run lines, fix commands, hints) that run a hostile
    value: every hostile value in the pools holds MARK."""
    bad = []
    for line in out.replace("\\\n", "").splitlines():
        text = line.strip()
        for lead in ("fix by hand:", "or by hand:", "fix:"):
            if text.startswith(lead):
                text = text[len(lead):].strip()
                break
        else:
            if not text.startswith(("docker run", "podman run", "ascend-env ", "--")):
                continue
        if MARK in text and runs_something(text):
            bad.append(line)
    return bad


def judge(case: Case, code: int | None, out: str, err: str) -> Verdict:
    verdict = Verdict(case, code)
    if code is None:
        verdict.problems.append("hang: no end within the bound")
        return verdict
    if TRACEBACK in out or TRACEBACK in err:
        verdict.problems.append("traceback")
    if code not in (1, 2):
        verdict.problems.append(f"exit {code}, expected 1 or 2")
    for line in unsafe_printed(out):
        verdict.problems.append(f"unsafe printed command: {line.strip()[:200]}")
    return verdict


def snapshot(paths: list[Path]) -> dict[str, str]:
    """Kind, size, mtime and digest of each path (a device node: its kind only), so a run
    that changed one of them is seen."""
    seen: dict[str, str] = {}
    for path in paths:
        try:
            info = path.lstat()
        except OSError:
            seen[str(path)] = "absent"
            continue
        if stat.S_ISREG(info.st_mode) and info.st_size < (1 << 20):
            seen[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif stat.S_ISDIR(info.st_mode):
            seen[str(path)] = "dir:" + ",".join(sorted(p.name for p in path.iterdir()))
        else:
            seen[str(path)] = f"mode {stat.S_IFMT(info.st_mode):o} size {info.st_size}"
    return seen


def watched(files: dict[str, Path], inputs: Path, base: Path) -> list[Path]:
    """What no run may change: the bad files in INPUTS and that folder, BASE's listing (the
    run's own folder is the only other thing in it), and the device nodes named."""
    return [*(p for p in files.values() if p.parent == inputs), inputs, base,
            Path("/dev/full"), Path("/dev/null"), Path("/dev/zero")]
