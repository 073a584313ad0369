"""Database URLs as the service and ``sat serve`` show them: with the password masked.

A PostgreSQL URL may carry a password (``postgresql://user:password@host/name``). Every line
the service or the command line prints (the start line, its errors, ``check``, ``keys``, the
log) shows a URL through :func:`shown`, and passes any text that may echo one (a driver's
error message) through :func:`redact`.
"""

from __future__ import annotations

import re
from urllib.parse import quote

#: What stands for a password.
MASK = "***"

# scheme://user:password@ in free text (a URL that cannot be parsed, a driver's message).
_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@'\"]*:)[^\s/@'\"]*@")
# libpq's keyword form, which a driver's message may echo: password=... or password='...'.
_KEYWORD = re.compile(r"(?P<head>\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s'\"]+)",
                      re.IGNORECASE)


def shown(url: str) -> str:
    """``url`` as the user gave it, its password (if any) replaced by ``***``."""
    import sqlalchemy as sa

    try:
        parsed = sa.engine.make_url(url)
    except Exception:  # not a URL SQLAlchemy reads: mask what looks like a password
        return redact(str(url))
    if parsed.password is None:
        return redact(str(url))
    return redact(parsed.render_as_string(hide_password=True), url)


def redact(text: str, url: str | None = None) -> str:
    """``text`` with every password masked: ``url``'s own (as given and URL-encoded, wherever
    it appears), and any ``scheme://user:password@`` or ``password=...``."""
    text = str(text)
    if url is not None:
        import sqlalchemy as sa

        try:
            password = sa.engine.make_url(url).password
        except Exception:
            password = None
        if password:
            for form in {str(password), quote(str(password), safe="")}:
                text = text.replace(form, MASK)
    text = _USERINFO.sub(lambda m: f"{m['head']}{MASK}@", text)
    return _KEYWORD.sub(lambda m: f"{m['head']}{MASK}", text)


def reason(exc: BaseException, url: str | None = None) -> str:
    """``exc`` in one line, ``Type: first line`` (the driver's own error where SQLAlchemy
    wraps one), with every password masked (``url``'s too)."""
    inner = getattr(exc, "orig", None) or exc
    lines = str(inner).strip().splitlines()
    return redact(f"{type(inner).__name__}: {lines[0] if lines else ''}".rstrip(": "), url)
