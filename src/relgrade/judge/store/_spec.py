"""What a ``--store`` value names: a PostgreSQL database, a SQLite file, or an error; never a silent fallback.

A value that looks like a database URL or DSN is one (issue 34): it opens PostgreSQL when relgrade can honour it, and
is a one-line error (the password masked) otherwise; it is never taken as the name of a SQLite file to create. The
rules (:func:`parse_store`), applied to ``--store``, ``store=`` and ``$RELGRADE_STORE`` alike:

- **PostgreSQL URL**: the scheme ``postgresql`` or ``postgres``, any case, with or without a SQLAlchemy driver suffix
  (``postgresql+psycopg``), then ``//``; surrounding whitespace is dropped. It is passed to libpq as
  ``postgresql://...``.
- **libpq key=value DSN**: a value holding a libpq keyword followed by ``=`` (``host=db port=5432 dbname=x``); passed
  to libpq as it is.
- **errors**: a PostgreSQL scheme without its two slashes (``postgresql:/user@host``), any other URL (``mysql://``,
  ``sqlite:///x.db``, ``jdbc:postgresql://``, ``https://``), a known database scheme without slashes, and
  ``user:password@host`` without a scheme.
- **SQLite file**: every other value, a path. A path with leading or trailing whitespace is refused unless that file
  exists (``' judgments.sqlite'`` is a typo, not a name).
"""

from __future__ import annotations

import re
from pathlib import Path

from relgrade._errors import InputError
from relgrade._redact import redact_url

__all__ = ["is_database", "parse_store"]

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]+):(.*)\Z", re.S)
_POSTGRES = {"postgresql", "postgres"}
_DATABASES = _POSTGRES | {
    "pgsql", "psql", "postgis", "cockroachdb", "redshift", "timescale", "mysql", "mariadb", "sqlite", "sqlite3",
    "mssql", "sqlserver", "oracle", "db2", "snowflake", "duckdb", "redis", "mongodb", "mongodb+srv", "jdbc", "odbc",
    "clickhouse", "libsql", "file"}
_DSN_KEYWORD = re.compile(
    r"(?:^|\s)(host|hostaddr|port|dbname|user|password|passfile|service|sslmode|sslpassword|options|connect_timeout|"
    r"application_name|target_session_attrs|channel_binding|sslcert|sslkey|sslrootcert|gssencmode|krbsrvname|"
    r"require_auth|load_balance_hosts)\s*=", re.I)
_USERINFO = re.compile(r"(//)?[^\s/@:]+:[^\s@]*@[^\s/@]+")
_EXAMPLE = "postgresql://USER@HOST:5432/DB"


def _scheme(text: str) -> tuple[str, str] | None:
    """``(scheme in lower case, the rest after ':')`` when ``text`` starts with a URL scheme of 2+ characters."""
    m = _SCHEME.match(text)
    return (m.group(1).lower(), m.group(2)) if m else None


def _looks_like_database(text: str) -> bool:
    found = _scheme(text)
    if found is not None:
        scheme, rest = found
        if rest.startswith("//") or scheme.split("+", 1)[0] in _DATABASES or scheme.startswith("jdbc"):
            return True
    return bool(_DSN_KEYWORD.search(text) or _USERINFO.match(text))


def is_database(spec: "str | Path") -> bool:
    """True when ``spec`` looks like a database URL or DSN of any engine (it is then never a SQLite path)."""
    return _looks_like_database(str(spec).strip())


def parse_store(spec: "str | Path", option: str = "--store") -> "tuple[str, str | Path]":
    """``("postgres", conninfo)`` or ``("sqlite", path)`` for a store value (see the module doc); an
    :class:`InputError` naming ``option``, with any password masked, for a value that looks like a database URL or DSN
    relgrade cannot open."""
    text = str(spec)
    stripped = text.strip()
    if not stripped:
        raise InputError(f"{option} is blank: give a SQLite file or a {_EXAMPLE} URL")
    if not _looks_like_database(stripped):
        if stripped != text and not Path(text).exists():
            raise InputError(f"{option} {text!r}: the path starts or ends with whitespace; remove it")
        return "sqlite", spec if isinstance(spec, Path) else text
    shown = redact_url(stripped)
    found = _scheme(stripped)
    if found is None:
        if _DSN_KEYWORD.search(stripped):
            return "postgres", stripped
        raise InputError(f"{option} {shown}: this looks like a database URL without its scheme; write {_EXAMPLE}")
    scheme, rest = found
    engine = scheme.split("+", 1)[0]
    if engine in _POSTGRES:
        if rest.startswith("//") and not rest.startswith("////"):
            return "postgres", f"postgresql:{rest}"
        raise InputError(f"{option} {shown}: a PostgreSQL URL starts with postgresql:// (two slashes), e.g. {_EXAMPLE}")
    if scheme.startswith("jdbc"):
        raise InputError(f"{option} {shown}: a JDBC URL is for Java; give the PostgreSQL URL itself, e.g. {_EXAMPLE}")
    if engine in {"sqlite", "sqlite3", "file"}:
        raise InputError(f"{option} {shown}: give the SQLite file's path itself (e.g. {option} judgments.sqlite), not "
                         "a URL")
    where = engine if engine in _DATABASES else f"a {scheme}: URL"
    raise InputError(f"{option} {shown}: relgrade keeps judgments in a SQLite file (a path) or in PostgreSQL "
                     f"({_EXAMPLE}), not in {where}")
