"""Secrets out of every output: database URLs without their passwords, and every piece of every known key masked.

A ``postgresql://`` URL may carry a password in its user-info (``user:PASSWORD@host``) or in its query string
(``?password=...``, also ``sslpassword``), and a malformed URL (a bad percent-escape, an unclosed ``[``, an ``@``
inside the password) makes the driver quote pieces of it in its error. The rules, which never parse the URL with a
library that may give up on it:

- :func:`redact_url`: everything between ``://`` and the *last* ``@`` before the path is credentials; the user name
  (up to the first ``:``) is kept, the rest becomes ``***``. libpq splits at the *first* ``@``, so an ``@`` inside
  a password would otherwise leave its tail in the host name. The query string is dropped (it is never needed to
  name the store); a string that does not look like a URL at all is shown as ``postgresql://***``.
- :func:`redact_text`: a driver's message about that URL with every piece of the credentials (the whole secret part,
  its pieces split at ``@`` / ``:``, their percent-decoded forms, and query-string passwords) masked, and every other
  URL in it redacted as above.

The same rules cover what a mistyped store value looks like (:mod:`relgrade.judge.store._spec` names it in its error):
any scheme with one slash or none (``postgresql:/user:pw@host``), ``mysql://``, ``user:pw@host`` without a scheme,
and a libpq key=value DSN (``host=db password=...``: every value but a host's, port's, database's, user's... masked).

Keys (issue 34): :func:`known_secrets` gathers the keys of the environment and the forms a server may echo them in;
:func:`mask_pieces` masks every piece of 12 characters or more of any of them (a key cut short, its middle, its
halves on two lines), which every masking of relgrade uses (the judge's transports, the CLI's error lines).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import TypeVar
from urllib.parse import unquote

MASK = "***"
_SECRET_PARAMS = {"password", "sslpassword"}
_URL = re.compile(r"postgres(?:ql)?://[^\s'\"]*", re.IGNORECASE)
_KV_PASSWORD = re.compile(r"\b(ssl)?password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
_MIN_PIECE = 3  # shorter fragments are not masked in free text (they would mask ordinary letters)
_HEAD = re.compile(r"((?:[A-Za-z][A-Za-z0-9+.\-]+:)?[A-Za-z][A-Za-z0-9+.\-]+):(/*)(.*)\Z", re.S)  # jdbc:postgresql://
_DSN = re.compile(r"[A-Za-z_]+\s*=")  # a libpq key=value DSN starts with a keyword and '='
_KV_ANY = re.compile(r"\b([A-Za-z_]+)\s*=\s*('(?:[^'\\]|\\.)*'|\S+)")
_DSN_SHOWN = {"host", "hostaddr", "port", "dbname", "user", "sslmode", "connect_timeout", "application_name",
              "options", "target_session_attrs", "gssencmode", "channel_binding", "load_balance_hosts"}


def _split(url: str) -> tuple[str, str, str, str]:
    """``(scheme:// or '', userinfo or '', host and path, query)``. The scheme is kept with the slashes it has (one,
    two or more: ``postgresql:/user:pw@host`` is split too); without a slash after it (``postgres:pw@host``) it may
    be a user name, so the value is all userinfo up to its last ``@``. The userinfo ends at the *last* ``@`` of the
    URL, even one after a ``/`` or ``?`` (a password may hold both): a URL whose query holds an ``@`` loses its host
    to the mask, which is safe."""
    m = _HEAD.match(url)
    if m and m.group(2):
        head, tail = m.group(1) + ":" + m.group(2), m.group(3)
    else:
        head, tail = "", url
    cred, at, rest = tail.rpartition("@")
    if not at:
        cred, rest = "", tail
    body, _, query = rest.partition("?")
    return head, cred, body, query


def _query_secrets(url: str) -> list[str]:
    """Values of ``password`` / ``sslpassword`` parameters anywhere in ``url`` (names percent-decoded, as libpq does)."""
    out = []
    for chunk in url.split("?")[1:]:
        for part in chunk.split("&"):
            name, eq, value = part.partition("=")
            if eq and unquote(name).strip().lower() in _SECRET_PARAMS and value:
                out.append(value)
    return out


def url_secrets(url: str) -> list[str]:
    """The secret strings of ``url`` as they may be quoted back: the password part of the user-info, its pieces
    (split at ``@`` and ``:``), percent-decoded forms, and the values of query-string passwords; longest first."""
    url = url.strip()
    _, cred, _, _ = _split(url)
    found = []
    if cred:
        secret = cred.partition(":")[2]
        if secret:
            found.append(secret)
            found += re.split(r"[@:/?&=#\s]", secret)
    found += _query_secrets(url)
    dsn = bool(_DSN.match(url))  # a libpq DSN: every value of a key not known to hold no secret (``passwd=``, a
    for m in (_KV_ANY if dsn else _KV_PASSWORD).finditer(url):  # misspelt ``password``), quoted or not
        if dsn and m.group(1).lower() in _DSN_SHOWN:
            continue
        value = m.group(2)
        found.append(value)
        if value.startswith("'"):
            found.append(re.sub(r"\\(.)", r"\1", value[1:-1]))
    forms = set()
    for s in found:
        if s:
            forms.add(s)
            forms.add(unquote(s))
    return sorted((s for s in forms if len(s) >= _MIN_PIECE or s in found[:1]), key=len, reverse=True)


def redact_url(url: str) -> str:
    """``url`` with its password masked and its query string dropped (see the module doc); a libpq key=value DSN
    with every value masked but those of keys that hold no secret (host, port, dbname, user, ...)."""
    if not isinstance(url, str):
        return "postgresql://***"
    url = url.strip()
    if _DSN.match(url):  # every value but those of keys known to hold no secret
        shown = _KV_ANY.sub(lambda m: m.group(0) if m.group(1).lower() in _DSN_SHOWN else f"{m.group(1)}={MASK}", url)
        return " ".join(shown.split())
    scheme, cred, rest, _ = _split(url)
    if not scheme and not cred:
        return "postgresql://***"
    if cred:
        user = cred.split(":", 1)[0].split("@", 1)[0]
        cred = f"{user}:{MASK}@" if (":" in cred or "@" in cred) else f"{user}@"
    if any(c.isspace() for c in rest):
        rest = rest.split()[0] if rest.split() else ""
    return f"{scheme}{cred}{rest}"


PIECE = 12
"""A piece of a secret this long or longer is masked wherever it appears (:func:`mask_pieces`)."""
_WINDOW, _STEP = 6, 7  # _WINDOW + _STEP - 1 <= PIECE: every 12-character piece holds a sampled window
T = TypeVar("T", str, bytes)


@lru_cache(maxsize=256)
def _compile(secrets: tuple, kind: type) -> tuple[tuple, dict]:
    """``(short secrets longest first, {6-character window: [(secret, offset)]})`` of :func:`mask_pieces`."""
    short = tuple(sorted({s for s in secrets if 0 < len(s) < PIECE}, key=len, reverse=True))
    windows: dict = {}
    for s in {s for s in secrets if len(s) >= PIECE}:
        for o in range(len(s) - _WINDOW + 1):
            windows.setdefault(s[o:o + _WINDOW], []).append((s, o))
    return short, windows


def mask_pieces(text: T, secrets: tuple) -> T:
    """``text`` (str or bytes; ``secrets`` of the same type) with every piece of 12 or more characters of a secret of
    12 or more characters masked (a key cut short, its middle, its two halves split by a line break), and every
    shorter secret masked where it appears whole.

    Any 12-character span of the text holds a 6-character window starting at a multiple of 7; so only those windows
    of the text are looked up, in a table of every 6-character window of every secret (one dictionary lookup per 7
    characters of text, whatever the number of secrets), and a hit is grown left and right while the text still
    agrees with the secret there: a hit grown to 12 or more characters is masked (``python
    benchmarks/secret_masking.py``)."""
    if not secrets or not text:
        return text
    short, windows = _compile(tuple(secrets), type(text))
    spans: list[tuple[int, int]] = []
    n = len(text)
    if windows:
        for t in range(0, n - _WINDOW + 1, _STEP):
            places = windows.get(text[t:t + _WINDOW])
            if not places:
                continue
            for secret, o in places:
                left = 0
                while left < o and left < t and text[t - left - 1] == secret[o - left - 1]:
                    left += 1
                right = _WINDOW
                while o + right < len(secret) and t + right < n and text[t + right] == secret[o + right]:
                    right += 1
                if left + right >= PIECE:
                    spans.append((t - left, t + right))
    mask = MASK if isinstance(text, str) else MASK.encode()
    if spans:
        spans = [_whole_escapes(text, a, b) for a, b in spans]
        spans.sort()
        out, end = [], 0
        merged: list[list[int]] = []
        for a, b in spans:
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        for a, b in merged:
            out += [text[end:a], mask]
            end = b
        out.append(text[end:])
        text = text[:0].join(out)
    for secret in short:
        if secret in text:
            text = text.replace(secret, mask)
    return text


def _whole_escapes(text, start: int, end: int) -> tuple[int, int]:
    """A span grown so that it neither begins with an escaped character nor ends with its escaping backslash: masking
    half of a ``\\"`` in JSON text would leave a dangling backslash or a bare quote, and the JSON unreadable."""
    slash, u = ("\\", "u") if isinstance(text, str) else (92, 117)
    hexes = 0  # a span that begins inside a \uXXXX escape begins at its backslash
    while hexes < 4 and start - hexes - 1 >= 0 and _is_hex(text[start - hexes - 1]):
        hexes += 1
    for k in range(hexes + 1):
        if start - k - 2 >= 0 and text[start - k - 1] == u and text[start - k - 2] == slash \
                and _escaping(text, start - k - 2):
            start = start - k - 2
            break
    run = 0
    while start - run - 1 >= 0 and text[start - run - 1] == slash:
        run += 1
    if run % 2:
        start -= 1
    run = 0
    while end - run - 1 >= start and text[end - run - 1] == slash:
        run += 1
    before = 0
    while run == end - start and start - before - 1 >= 0 and text[start - before - 1] == slash:
        before += 1  # a span of backslashes only: the run goes on before it
    if (run + before) % 2 and end < len(text):
        end += 1
    return start, end


def _is_hex(c) -> bool:
    return (chr(c) if isinstance(c, int) else c) in "0123456789abcdefABCDEF"


def _escaping(text, i: int) -> bool:
    """Whether the backslash at ``i`` starts an escape (an even run of backslashes before it)."""
    slash = "\\" if isinstance(text, str) else 92
    run = 0
    while i - run - 1 >= 0 and text[i - run - 1] == slash:
        run += 1
    return run % 2 == 0


def redact_text(text: str, url: str | None = None) -> str:
    """``text`` (a driver's error message) with ``url``'s secrets (every 12-character piece of a long one,
    :func:`mask_pieces`), any ``password=...`` and every URL's password masked; one line."""
    text = " ".join(str(text).split())
    if url:
        text = mask_pieces(text, tuple(url_secrets(url)))
    text = _KV_PASSWORD.sub(lambda m: f"{m.group(1) or ''}password={MASK}", text)
    return _URL.sub(lambda m: redact_url(m.group(0)), text)


_CREDENTIAL_VAR = re.compile(r"(API_KEY|_KEY|_TOKEN|_SECRET|_PASSWORD|_SECRET_ACCESS_KEY)$", re.IGNORECASE)
MIN_SECRET = 6
"""Shorter values are not registered (they would mask ordinary words)."""


def known_secrets(*keys: "str | None", env_names=()) -> tuple[str, ...]:
    """The secrets to mask: ``keys``, the values of the variables ``env_names`` and of every environment variable
    whose name says it holds a credential (``*_API_KEY``, ``*_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``), at
    least :data:`MIN_SECRET` characters long, and the forms a server may echo them in; longest first."""
    import os

    found: list[str] = [k for k in keys if k]
    for name in env_names:
        if name and os.environ.get(name):
            found.append(os.environ[name])
    for name, value in os.environ.items():
        if _CREDENTIAL_VAR.search(name) and value:
            found.append(value)
    out = {s.strip() for s in found if s and len(s.strip()) >= MIN_SECRET}
    out |= {form for s in out for form in _echoed_forms(s)}
    return tuple(sorted(out, key=len, reverse=True))  # longest first: a key containing another is masked whole


def _echoed_forms(secret: str) -> set[str]:
    """How a server may echo a key: inside a JSON string (a key with " or \\ in it, or non-ASCII), in HTML
    (``&amp;``, ``&quot;``...), percent-encoded in a URL, and each of these inside a JSON string (an answer that quotes
    a request or an error page)."""
    from html import escape
    from urllib.parse import quote, quote_plus

    in_json = json.dumps(secret)[1:-1]
    once = {secret, in_json, in_json.replace("/", "\\/"), json.dumps(secret, ensure_ascii=False)[1:-1],
            escape(secret), escape(secret, quote=False), quote(secret, safe=""), quote_plus(secret)}
    twice = {json.dumps(form, ensure_ascii=ascii)[1:-1] for form in once for ascii in (True, False)}
    return (once | twice) - {secret}


__all__ = ["MASK", "MIN_SECRET", "PIECE", "known_secrets", "mask_pieces", "redact_text", "redact_url", "url_secrets"]
