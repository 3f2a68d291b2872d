"""`fetch` against hostile input: malformed HTTP answers, bad URLs, hostile zips, a repository
folder turned into links, files or FIFOs. Each is a clear error; nothing is written outside
DEST and nothing refused stays in the repository."""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from ascend_env.core.urls import URLError, check_url
from ascend_env.repository import http
from ascend_env.repository.fetch import FetchResult, Source, fetch
from ascend_env.repository.repo_folder import RepoFolderError
from ascend_env.spec.catalogue import CatalogueError, load_overlay
from tests.cli_invoke import invoke
from tests.repository.test_fetch import (
    HDK,
    MEMBERS,
    OPS,
    TOOLKIT,
    make_zip,
    overlay_for,
    plan_with,
    served,
)
from tests.vendor_server import ServerState, raw_server

__all__ = ["served"]  # the fixture, used by name

Served = tuple[str, ServerState, dict[str, bytes]]


def fetch_from(url: str, files: dict[str, bytes], tmp_path: Path, dest: Path | None = None
               ) -> FetchResult:
    return fetch(plan_with(overlay_for(files, url), tmp_path), dest or tmp_path / "repo",
                 Source())


def failure(result: FetchResult, name: str) -> str:
    found = next(f for f in result.files if f.file == name)
    assert found.status == "failed", found
    return found.message


def files_under(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.lstat().st_size for p in root.rglob("*")}


# -- HTTP: every malformed answer is a per-file error naming the URL and the problem ----------

ZIPS = {name: make_zip(members) for name, members in MEMBERS.items()}
_HEADERS = "".join(f"X-{n}: {n}\r\n" for n in range(101))
MALFORMED = {
    "non-numeric Content-Length": (b"HTTP/1.1 200 OK\r\nContent-Length: lots\r\n\r\nabc",
                                   "Content-Length 'lots'"),
    "more than 100 headers": (f"HTTP/1.1 200 OK\r\n{_HEADERS}\r\n".encode(),
                              "more than 100 headers"),
    "an overlong header line": (b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 70_000 + b"\r\n\r\n",
                                "LineTooLong"),
    "a bad status line": (b"HTTP/1.1 abc OK\r\n\r\n", "BadStatusLine"),
    "garbage": (b"\x00\xff\xfe not http at all\r\n\r\n", "malformed HTTP answer"),
    "an HTML page by its type": (b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8"
                                 b"\r\nContent-Length: 13\r\n\r\n<p>login</p>\n",
                                 "HTML page"),
    "an HTML page by its body": (b"HTTP/1.1 200 OK\r\nContent-Length: 22\r\n\r\n"
                                 b"  <!DOCTYPE html><html>", "HTML page"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_answer_is_a_per_file_error_naming_url_and_problem(
        case: str, tmp_path: Path) -> None:
    answer, problem = MALFORMED[case]
    with raw_server(answer) as (url, seen):
        result = fetch_from(url, ZIPS, tmp_path)
    assert not result.complete
    for name in ZIPS:
        message = failure(result, name)
        assert f"{url}/Ascend%20HDK/{name}" in message, message
        assert problem in message, message
    # A protocol error is not a dropped connection: no retries.
    assert len(seen) == len(ZIPS)
    assert not {p.name for p in (tmp_path / "repo").iterdir()} & set(ZIPS)


def test_a_resume_answered_with_the_wrong_content_range_is_refused(tmp_path: Path) -> None:
    dest = tmp_path / "repo"
    (dest / ".partial").mkdir(parents=True)
    (dest / ".partial" / f"{OPS}.part").write_bytes(ZIPS[OPS][:1000])
    body = ZIPS[OPS][500:]
    answer = (f"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 500-{len(ZIPS[OPS]) - 1}/"
              f"{len(ZIPS[OPS])}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
    with raw_server(answer) as (url, seen):
        result = fetch_from(url, {OPS: ZIPS[OPS]}, tmp_path, dest)
    message = failure(result, OPS)
    assert "Content-Range 'bytes 500-" in message and "resume from byte 1000" in message
    assert url in message
    assert b"Range: bytes=1000-" in seen[0]
    assert not (dest / OPS).exists()


def test_a_server_that_drips_is_stopped_as_stalled(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    # The bound is shortened here (120 s in use); what is checked is the outcome, not a time.
    monkeypatch.setattr(http, "STALL_S", 0.2)
    body = ZIPS[OPS]
    head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    with raw_server(head + body, drip_after=len(head) + 100) as (url, seen):
        plan = plan_with(overlay_for({OPS: body}, url), tmp_path)
        only_ops = plan.model_copy(update={"items": [i for i in plan.items
                                                     if i.download == OPS]})
        result = fetch(only_ops, tmp_path / "repo", Source())
    message = failure(result, OPS)
    assert "failed 3 times" in message and "stalled" in message, message
    assert len(seen) == 3
    assert b"Range: bytes=" in seen[1]  # each attempt resumes what the last one kept


@pytest.mark.parametrize(("url", "problem"), [
    ("http://mirror.example:99999/", "Port out of range"),
    ("http://mirror.example:80a/", "Port could not be cast"),
    ("http://[fe80::1/", "Invalid IPv6 URL"),
    ("http://[::zz]/", "IPv6"),
    ("http://mirror example/", "space"),
    ("ftp://mirror.example/", "not an http:// or https:// URL"),
    ("file:///etc/passwd", "not an http:// or https:// URL"),
    ("http:///path", "names no host"),
    ("http://bad_host!/", "invalid host name"),
])
def test_bad_mirror_urls_are_refused_when_read(url: str, problem: str, tmp_path: Path) -> None:
    with pytest.raises(URLError, match="--mirror") as raised:
        check_url(url, "--mirror")
    assert problem in str(raised.value)
    result = invoke("fetch", "--profile", "310p", "--repo", str(tmp_path / "r"),
                    "--mirror", url)
    assert result.code == 2, result
    assert problem in result.err
    assert "Traceback" not in result.err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("url", "problem"), [
    ("http://mirror.example:0x50/a.zip", "Port could not be cast"),
    ("http://[::1/a.zip", "Invalid IPv6 URL"),
    ("http://mirror.example/CANN 8.5.0/a.zip", "space"),
    ("ftp://mirror.example/a.zip", "not an http:// or https:// URL"),
])
def test_bad_overlay_urls_are_refused_when_the_overlay_is_read(url: str, problem: str,
                                                               tmp_path: Path) -> None:
    overlay = overlay_for(ZIPS, "http://127.0.0.1:9")
    overlay["components"]["Test"]["1"]["files"][1]["url"] = url
    path = tmp_path / "overlay.json"
    path.write_text(json.dumps(overlay))
    with pytest.raises(CatalogueError, match=r"files\[1\]\.url") as raised:
        load_overlay(path)
    assert problem in str(raised.value)
    result = invoke("fetch", "--profile", "310p", "--repo", str(tmp_path / "r"),
                    "--catalogue", str(path))
    assert result.code == 2, result
    assert problem in result.err and "Traceback" not in result.err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("url", ["https://ascend-repo.obs.cn-east-2.myhuaweicloud.com/CANN/"
                                 "CANN%208.5.0/x.zip", "http://[::1]:8080/", "http://10.0.0.1/"])
def test_good_urls_pass(url: str) -> None:
    assert check_url(url, "--mirror") == url


# -- archives ----------------------------------------------------------------------------------

def patched(data: bytes, member: str, *, method: int | None = None, flags: int | None = None
            ) -> bytes:
    """The zip with one member's compression method or flag bits changed in both its local
    header and its central directory entry (what a hostile or exotic writer emits)."""
    buffer = bytearray(data)
    encoded = member.encode()
    # (signature, where the name's length is, where the name starts, where the flags are)
    for signature, length_at, name_at, flags_at in ((b"PK\x03\x04", 26, 30, 6),
                                                    (b"PK\x01\x02", 28, 46, 8)):
        start = 0
        while (start := buffer.find(signature, start)) >= 0:
            length = int.from_bytes(buffer[start + length_at:start + length_at + 2], "little")
            if buffer[start + name_at:start + name_at + length] == encoded:
                if flags is not None:
                    buffer[start + flags_at:start + flags_at + 2] = flags.to_bytes(2, "little")
                if method is not None:
                    buffer[start + flags_at + 2:start + flags_at + 4] = method.to_bytes(
                        2, "little")
            start += 4
    return bytes(buffer)


def with_members(*names: str) -> bytes:
    return make_zip(MEMBERS[OPS], tuple((zipfile.ZipInfo(n), b"x") for n in names))


HOSTILE: dict[str, tuple[Callable[[], bytes], str]] = {
    "a file and a folder of one name": (lambda: with_members("a.run", "a.run/b"),
                                        "both a file and a folder"),
    "a folder entry then a file": (lambda: with_members("d/", "d"), "both a file and a folder"),
    "an overlong name": (lambda: with_members("n" * 300 + ".run"), "overlong name"),
    "a deep overlong path": (lambda: with_members("/".join(["d" * 200] * 6)), "overlong name"),
    "an encrypted member": (lambda: patched(make_zip(MEMBERS[OPS]), MEMBERS[OPS][0], flags=1),
                            "is encrypted"),
    "an unknown compression method": (
        lambda: patched(make_zip(MEMBERS[OPS]), MEMBERS[OPS][0], method=99),
        "compression method 99"),
    "a backslash path": (lambda: with_members("..\\..\\evil.run"), "would escape"),
    "a control character": (lambda: with_members("a\nb.run"), "control character"),
    "not a zip": (lambda: b"PK\x03\x04 truncated", "not a valid zip"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_archives_are_refused_and_removed(served: Served, tmp_path: Path,
                                                  case: str) -> None:
    url, state, files = served
    build, problem = HOSTILE[case]
    files[OPS] = build()
    (state.root / OPS).write_bytes(files[OPS])
    dest = tmp_path / "repo"
    result = fetch_from(url, files, tmp_path, dest)
    message = failure(result, OPS)
    assert problem in message, message
    assert "removed from the repository" in message
    assert not (dest / OPS).exists()
    assert not (dest / OPS.removesuffix(".zip")).exists()
    assert not list((dest / ".partial").iterdir())
    assert OPS not in json.loads((dest / "repo.json").read_text())["files"]
    # The other archives are unaffected.
    assert (dest / TOOLKIT).is_file() and (dest / HDK).is_file()


def test_a_refused_archive_already_in_the_repository_is_removed(served: Served,
                                                               tmp_path: Path) -> None:
    """An archive an older fetch let in (its digest matches) is refused on the next run and
    does not stay under its name."""
    url, state, files = served
    files[OPS] = with_members("a.run", "a.run/b")
    (state.root / OPS).write_bytes(files[OPS])
    dest = tmp_path / "repo"
    dest.mkdir()
    (dest / OPS).write_bytes(files[OPS])
    result = fetch_from(url, files, tmp_path, dest)
    assert "both a file and a folder" in failure(result, OPS)
    assert not (dest / OPS).exists()
    assert OPS not in {name for name, _ in state.requests}  # it was "present", not downloaded


def test_a_zip_bomb_is_refused_without_writing_what_it_expands_to(served: Served,
                                                                  tmp_path: Path) -> None:
    url, state, files = served
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo(MEMBERS[OPS][0])
        info.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(info, "w") as member:
            block = b"\0" * (1 << 20)
            for _ in range(512):
                member.write(block)
    files[OPS] = buffer.getvalue()
    assert len(files[OPS]) < 1 << 20  # 0.5 MB that unpacks 512 MiB
    (state.root / OPS).write_bytes(files[OPS])
    dest = tmp_path / "repo"
    message = failure(fetch_from(url, files, tmp_path, dest), OPS)
    assert f"unpacks to {512 << 20} bytes" in message, message
    assert not (dest / OPS).exists()
    assert sum(files_under(dest).values()) < 4 * sum(len(d) for d in files.values())


def test_members_without_file_type_bits_are_unpacked_with_their_mode(served: Served,
                                                                     tmp_path: Path) -> None:
    url, state, files = served
    plain, bare = zipfile.ZipInfo("plain.run"), zipfile.ZipInfo("bare.txt")
    plain.external_attr = 0o755 << 16  # permission bits only, no S_IFREG
    bare.external_attr = 0
    files[OPS] = make_zip(MEMBERS[OPS], ((plain, b"#!/bin/sh\n"), (bare, b"text")))
    (state.root / OPS).write_bytes(files[OPS])
    dest = tmp_path / "repo"
    result = fetch_from(url, files, tmp_path, dest)
    assert result.complete, result
    folder = dest / OPS.removesuffix(".zip")
    assert stat.S_IMODE((folder / "plain.run").stat().st_mode) == 0o755
    assert (folder / "bare.txt").read_bytes() == b"text"


def test_every_unpacked_member_is_recorded_with_its_digest_and_an_altered_one_is_redone(
        served: Served, tmp_path: Path) -> None:
    url, _, files = served
    dest = tmp_path / "repo"
    assert fetch_from(url, files, tmp_path, dest).complete
    recorded = json.loads((dest / "repo.json").read_text())["files"]
    for archive, names in MEMBERS.items():
        with zipfile.ZipFile(io.BytesIO(files[archive])) as opened:
            expected = {n: {"sha256": hashlib.sha256(opened.read(n)).hexdigest(),
                            "size": opened.getinfo(n).file_size} for n in names}
        assert recorded[archive]["members"] == expected
    installer = dest / HDK.removesuffix(".zip") / MEMBERS[HDK][0]
    installer.write_bytes(b"#!/bin/sh\nreboot\n")
    again = fetch_from(url, files, tmp_path, dest)
    assert again.complete
    assert hashlib.sha256(installer.read_bytes()).hexdigest() == (
        recorded[HDK]["members"][MEMBERS[HDK][0]]["sha256"])


def test_repo_json_keeps_sections_it_does_not_know(served: Served, tmp_path: Path) -> None:
    url, _, files = served
    dest = tmp_path / "repo"
    dest.mkdir()
    wheels = {"x-1-py3-none-any.whl": {"sha256": "0" * 64}}
    (dest / "repo.json").write_text(json.dumps({"schema": "ascend-env/repo/v1", "files": {},
                                                "wheels": wheels}))
    assert fetch_from(url, files, tmp_path, dest).complete
    assert json.loads((dest / "repo.json").read_text())["wheels"] == wheels


# -- the repository folder ---------------------------------------------------------------------

def _symlink_out(path: Path, outside: Path) -> None:
    path.symlink_to(outside, target_is_directory=True)


PLACES: dict[str, Callable[[Path, Path], object]] = {
    ".partial as a symlink": lambda dest, outside: _symlink_out(dest / ".partial", outside),
    ".partial as a file": lambda dest, outside: (dest / ".partial").write_text("x"),
    ".partial as a FIFO": lambda dest, outside: os.mkfifo(dest / ".partial"),
    "an unpack folder as a symlink": lambda dest, outside: _symlink_out(
        dest / OPS.removesuffix(".zip"), outside),
    "an unpack folder as a file": lambda dest, outside: (
        dest / OPS.removesuffix(".zip")).write_text("x"),
    "an unpack folder as a FIFO": lambda dest, outside: os.mkfifo(
        dest / OPS.removesuffix(".zip")),
    "an archive's name as a symlink": lambda dest, outside: (dest / OPS).symlink_to(
        outside / "owned.zip"),
    "repo.json as a directory": lambda dest, outside: (dest / "repo.json").mkdir(),
    "repo.json as a FIFO": lambda dest, outside: os.mkfifo(dest / "repo.json"),
    "repo.json malformed": lambda dest, outside: (dest / "repo.json").write_text("{nope"),
    "repo.json of another shape": lambda dest, outside: (dest / "repo.json").write_text("[]"),
}


@pytest.mark.parametrize("case", sorted(PLACES))
def test_a_repository_folder_in_the_wrong_shape_is_an_error_and_nothing_leaves_dest(
        served: Served, tmp_path: Path, case: str) -> None:
    url, _, files = served
    dest, outside = tmp_path / "repo", tmp_path / "outside"
    dest.mkdir()
    outside.mkdir()
    PLACES[case](dest, outside)
    before = files_under(dest)
    with pytest.raises(RepoFolderError) as raised:
        fetch_from(url, files, tmp_path, dest)
    assert str(dest) in str(raised.value)
    assert raised.value.exit_code == 2
    assert files_under(outside) == {}
    assert files_under(dest) == before
    overlay = tmp_path / "overlay.json"
    overlay.write_text(json.dumps(overlay_for(files, url)))
    cli = invoke("fetch", "--profile", "310p", "--repo", str(dest), "--catalogue", str(overlay))
    assert cli.code == 2, cli
    assert "Traceback" not in cli.err and str(dest) in cli.err
    assert files_under(outside) == {}


def test_dest_that_is_a_file_is_an_error(tmp_path: Path) -> None:
    dest = tmp_path / "repo"
    dest.write_text("x")
    cli = invoke("fetch", "--profile", "310p", "--repo", str(dest))
    assert cli.code == 2
    assert "not a directory" in cli.err
