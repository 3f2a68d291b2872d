"""Checking a download or mirror URL when it is read, not when a worker thread first uses it.

urllib.parse accepts almost anything and fails late (a bad port raises only when `.port` is
read, a space reaches the request line); an operator's typo in `--mirror` or in a catalogue
overlay should be one clear message at once.
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse

from ascend_env.core.errors import UsageError

SCHEMES = ("http", "https")
# RFC 1123 host names: letters, digits and hyphens in dot-separated labels.
_HOST = re.compile(r"(?!-)[A-Za-z0-9_-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9_-]{1,63}(?<!-))*\.?")


class URLError(UsageError):
    """A URL that cannot be used: exit 2."""


def check_url(url: str, what: str) -> str:
    """`url` itself when it is an http(s) URL with a valid host and port; else URLError."""
    shown = url if len(url) <= 200 else url[:200] + "..."
    if not url or any(char.isspace() or ord(char) < 32 or ord(char) == 127 for char in url):
        raise URLError(f"{what}: {shown!r} is empty or has a space or control character "
                       "(write a space as %20)")
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:  # "Invalid IPv6 URL", "Port out of range 0-65535", ...
        raise URLError(f"{what}: {shown!r} is not a valid URL: {exc}") from exc
    if parts.scheme.lower() not in SCHEMES:
        raise URLError(f"{what}: {shown!r} is not an http:// or https:// URL")
    host = parts.hostname or ""
    if not host:
        raise URLError(f"{what}: {shown!r} names no host")
    if port == 0:
        raise URLError(f"{what}: {shown!r} names port 0")
    if "[" in parts.netloc:
        try:
            ipaddress.IPv6Address(host.split("%")[0])
        except ValueError as exc:
            raise URLError(f"{what}: {shown!r} has a bad IPv6 address: {exc}") from exc
    elif not _HOST.fullmatch(host):
        raise URLError(f"{what}: {shown!r} has an invalid host name {host!r}")
    return url
