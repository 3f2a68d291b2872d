"""Downloading one vendor file over HTTP(S) into a partial file, resumable, strictly read.

urllib trusts the server: a non-numeric Content-Length, a bad status line or a flood of headers
surface as http.client exceptions that are no OSError and so escape urlopen's own wrapping.
Here every such answer becomes a FetchError naming the URL and what was wrong with it; only
transfers that merely ended early (a dropped connection) are retried, resuming with Range.
"""

from __future__ import annotations

import http.client
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

from ascend_env.core.errors import AscendEnvError
from ascend_env.core.urls import check_url

CHUNK = 1 << 20
TIMEOUT_S = 60
# The socket timeout ends silence, not a drip: a server sending a few bytes a minute would hold
# a worker for days. Less than STALL_BYTES in STALL_S is a stalled transfer (resumed later).
STALL_S = 120.0
STALL_BYTES = 64 << 10
SNIFF = 64
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")
# What a login page, an error page or a captive portal starts with; no vendor file (zip, run
# script, wheel) does.
_HTML_STARTS = (b"<!doctype html", b"<html", b"<head", b"<?xml")


class FetchError(AscendEnvError):
    """One vendor file could not be put into the repository."""

    exit_code = 1


class Interrupted(Exception):
    """A transfer that ended early; it can be resumed."""


def _length(value: str | None, url: str, name: str) -> int | None:
    if value is None:
        return None
    if not value.strip().isdigit() or not value.strip().isascii():
        raise FetchError(f"{name}: {url} sent Content-Length {value[:40]!r}, which is not a "
                         "number of bytes")
    return int(value.strip())


def _resumed_from(value: str | None, have: int, length: int | None, url: str,
                  name: str) -> None:
    """A 206 answer must continue exactly where the partial file ends."""
    match = _CONTENT_RANGE.fullmatch((value or "").strip())
    problem = None
    if match is None:
        problem = f"a Content-Range of {value!r} (expected 'bytes {have}-END/TOTAL')"
    else:
        start, end = int(match[1]), int(match[2])
        if start != have:
            problem = f"Content-Range {value!r} for a resume from byte {have}"
        elif end < start or (length is not None and length != end - start + 1):
            problem = f"Content-Range {value!r} that disagrees with Content-Length {length}"
    if problem:
        raise FetchError(f"{name}: {url} answered the resume with {problem}; delete the "
                         "partial file in .partial/ to start over")


def _html(content_type: str | None, first: bytes) -> bool:
    if content_type and content_type.split(";")[0].strip().lower() in ("text/html",
                                                                       "application/xhtml+xml"):
        return True
    return first.lstrip()[:16].lower().startswith(_HTML_STARTS)


def _blocks(response: http.client.HTTPResponse, url: str) -> Iterator[bytes]:
    """The body as it arrives; a transfer slower than STALL_BYTES per STALL_S is stopped."""
    window, window_bytes = time.monotonic(), 0
    while True:
        # read1: what has arrived, so a drip cannot hold one read for hours.
        block = response.read1(CHUNK)
        if not block:
            return
        window_bytes += len(block)
        yield block
        if time.monotonic() - window > STALL_S:
            if window_bytes < STALL_BYTES:
                raise Interrupted(f"stalled: {window_bytes} bytes in the last {STALL_S:.0f} s "
                                  f"from {url}")
            window, window_bytes = time.monotonic(), 0


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if first:
        yield first
    yield from rest


def _open(request: urllib.request.Request, url: str, name: str,
          have: int) -> http.client.HTTPResponse | None:
    try:
        response: http.client.HTTPResponse = urllib.request.urlopen(request, timeout=TIMEOUT_S)
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code == 416 and have:  # already complete: the digest check decides
            return None
        raise FetchError(f"{name}: {url} answered HTTP {exc.code} {exc.reason}") from exc
    except http.client.RemoteDisconnected as exc:
        raise Interrupted(f"{url} closed the connection before answering") from exc
    except (http.client.HTTPException, ValueError) as exc:
        # A bad status line, garbage, more than 100 headers, an overlong header line.
        raise FetchError(f"{name}: {url} sent a malformed HTTP answer: "
                         f"{type(exc).__name__}: {str(exc)[:200]!r}") from exc
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, (http.client.HTTPException, ValueError)):
            raise FetchError(f"{name}: {url} sent a malformed HTTP answer: "
                             f"{type(reason).__name__}: {str(reason)[:200]!r}") from exc
        raise Interrupted(f"cannot reach {url}: {reason}") from exc
    except OSError as exc:
        raise Interrupted(f"cannot reach {url}: {exc}") from exc
    return response


def download_once(url: str, partial: Path, name: str, *,
                  start: Callable[[str, int | None], None],
                  advance: Callable[[str, int], None]) -> None:
    """One request for `url`, appended to `partial` when the server resumes it."""
    check_url(url, f"the download URL of {name}")
    have = partial.stat().st_size if partial.exists() else 0
    request = urllib.request.Request(url, headers={
        # The vendor's OBS buckets want a Referer from their own site (CCI Dockerfiles).
        "Referer": "https://www.hiascend.com/", "User-Agent": "ascend-env"})
    if have:
        request.add_header("Range", f"bytes={have}-")
    response = _open(request, url, name, have)
    if response is None:
        return
    with response:
        length = _length(response.headers.get("Content-Length"), url, name)
        resumed = response.status == 206
        if response.status not in (200, 206):
            raise FetchError(f"{name}: {url} answered HTTP {response.status} "
                             f"{response.reason}, not the file")
        if resumed:
            _resumed_from(response.headers.get("Content-Range"), have, length, url, name)
        expected_total = (length + (have if resumed else 0)) if length is not None else None
        written = have if resumed else 0
        try:
            blocks = _blocks(response, url)
            first = b""
            # Enough of the body to tell an HTML page from the file (a drip is still bounded).
            while len(first) < SNIFF:
                block = next(blocks, b"")
                if not block:
                    break
                first += block
            if not resumed and _html(response.headers.get("Content-Type"), first):
                raise FetchError(f"{name}: {url} answered an HTML page, not the file (a login "
                                 "or error page?); check the URL or the mirror")
            start(name, expected_total)
            if resumed:
                advance(name, have)
            with partial.open("ab" if resumed else "wb") as handle:
                for block in _chain(first, blocks):
                    handle.write(block)
                    written += len(block)
                    advance(name, len(block))
        except http.client.IncompleteRead as exc:
            raise Interrupted(f"connection lost after {written} bytes") from exc
        except (OSError, http.client.HTTPException) as exc:
            raise Interrupted(f"connection lost after {written} bytes: {exc!r}") from exc
    if expected_total is not None and written < expected_total:
        raise Interrupted(f"truncated: {written} of {expected_total} bytes")
