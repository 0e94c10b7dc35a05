"""Passwords never leave the process: the one place that masks them.

Every URL the tool takes (``--storage``, ``--address``, ...) may carry ``user:password@``. Whatever the tool
writes that could hold such a URL - the command line in a record's provenance, stored studies' attributes, log
lines, one-line errors, ``-o`` files and Parquet metadata (all of which take provenance) - passes through
``mask`` first. A URL is parsed with SQLAlchemy's ``make_url`` (the parser Optuna's own storages use) and written
back with ``render_as_string(hide_password=True)``; a URL it cannot parse (``redis://:pw@host``, ``ray://...``)
has its ``user:password@`` part masked by the same rule on the raw text. SQLAlchemy is imported only when a text
holds something that looks like a password, so the CLI's cold start does not pay for it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

MASK = "***"
"""What a password is replaced with."""

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"]+")
"""A URL inside a longer text (a command line, a log line, an error message)."""
_CREDENTIALS = re.compile(r"(://[^:/@\s]*:)(\S*)@")
"""``scheme://user:password@``: the part ``mask`` replaces where SQLAlchemy cannot parse the URL (greedy to the
last ``@``: a password may hold one; masking too much is safe, too little is not)."""


def mask_url(url: str) -> str:
    """``url`` with its password (if any) replaced by ``***``; everything else unchanged."""
    if not _CREDENTIALS.search(url):
        return url
    try:
        from sqlalchemy.engine import make_url

        parsed = make_url(url)
    except Exception:  # not a URL SQLAlchemy parses (redis, ray, a typo): mask by the raw rule
        parsed = None
    shown: str = url
    if parsed is not None and parsed.password is not None:
        shown = parsed.render_as_string(hide_password=True)
    # the raw rule after the parser: a password holding "@" parses as part of the host
    return _CREDENTIALS.sub(rf"\1{MASK}@", shown)


def mask(text: str) -> str:
    """``text`` with the password of every URL in it masked (a command line, a message, a log line)."""
    if "://" not in text or "@" not in text:
        return text
    return _URL.sub(_masked_token, text)


def _masked_token(match: re.Match[str]) -> str:
    token = match.group(0)
    url = token.rstrip(".,:;)]}")  # a URL ending a sentence in a message keeps its punctuation outside
    return mask_url(url) + token[len(url):]


def mask_argv(argv: Sequence[str]) -> str:
    """A command line as a shell would take it back, every password in it masked."""
    return shlex.join(mask(a) for a in argv)


def drop_password(url: str) -> str:
    """``url`` without its password at all (``user@host``), as tools that read ~/.pgpass or PGPASSWORD take it."""
    if not _CREDENTIALS.search(url):
        return url
    try:
        from sqlalchemy.engine import make_url

        parsed = make_url(url)
    except Exception:
        parsed = None
    if parsed is not None and parsed.password is not None:
        url = parsed.set(password=None).render_as_string(hide_password=False)
    return _CREDENTIALS.sub(lambda m: m.group(1)[:-1] + "@", url)
