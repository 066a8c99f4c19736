"""Database URLs without their passwords: the one redaction used wherever a store URL or a driver error is printed.

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
and a libpq key=value DSN (``host=db password=...``: every ``password=`` value masked, quoted or not).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

MASK = "***"
_SECRET_PARAMS = {"password", "sslpassword"}
_URL = re.compile(r"postgres(?:ql)?://[^\s'\"]*", re.IGNORECASE)
_KV_PASSWORD = re.compile(r"\b(ssl)?password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
_MIN_PIECE = 3  # shorter fragments are not masked in free text (they would mask ordinary letters)
_HEAD = re.compile(r"((?:[A-Za-z][A-Za-z0-9+.\-]+:)?[A-Za-z][A-Za-z0-9+.\-]+):(/*)(.*)\Z", re.S)  # jdbc:postgresql:// too
_DSN = re.compile(r"[A-Za-z_]+\s*=")  # a libpq key=value DSN starts with a keyword and '='


def _split(url: str) -> tuple[str, str, str, str]:
    """``(scheme:// or '', userinfo or '', host and path, query)``. The scheme is kept with the slashes it has (one, two
    or more: ``postgresql:/user:pw@host`` is split too); without a slash after it (``postgres:pw@host``) it may be a
    user name, so the value is all userinfo up to its last ``@``. The userinfo ends at the *last* ``@`` of the URL, even one after a ``/`` or ``?`` (a
    password may hold both): a URL whose query holds an ``@`` loses its host to the mask, which is safe."""
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
    for m in _KV_PASSWORD.finditer(url):  # a libpq key=value DSN: password=... or password='...'
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
    with its ``password=`` values masked."""
    if not isinstance(url, str):
        return "postgresql://***"
    url = url.strip()
    if _DSN.match(url):
        return " ".join(_KV_PASSWORD.sub(lambda m: f"{m.group(1) or ''}password={MASK}", url).split())
    scheme, cred, rest, _ = _split(url)
    if not scheme and not cred:
        return "postgresql://***"
    if cred:
        user = cred.split(":", 1)[0].split("@", 1)[0]
        cred = f"{user}:{MASK}@" if (":" in cred or "@" in cred) else f"{user}@"
    if any(c.isspace() for c in rest):
        rest = rest.split()[0] if rest.split() else ""
    return f"{scheme}{cred}{rest}"


def redact_text(text: str, url: str | None = None) -> str:
    """``text`` (a driver's error message) with ``url``'s secrets, any ``password=...`` and every URL's password
    masked; one line."""
    text = " ".join(str(text).split())
    if url:
        for secret in url_secrets(url):
            text = text.replace(secret, MASK)
    text = _KV_PASSWORD.sub(lambda m: f"{m.group(1) or ''}password={MASK}", text)
    return _URL.sub(lambda m: redact_url(m.group(0)), text)


__all__ = ["MASK", "redact_text", "redact_url", "url_secrets"]
