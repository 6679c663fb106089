"""Secrets in an image's env: which values they are, and how they are kept out of everything written.

An env var whose name has a secret-looking word (``*_TOKEN``, ``DB_PASSWORD``,
``AWS_SECRET_ACCESS_KEY``...; dockle PR #268) holds a secret: its value is replaced by
``[redacted]`` wherever it appears in output (reports, ``inspect``).

Redaction is for output only: facts are never computed from redacted text, so a secret
that happens to equal a fact string (``BUILD_TOKEN=12.4`` beside CUDA 12.4) cannot
change a verdict. The facts cache keeps secrets off disk with a reversible mask
(``mask_data`` / ``unmask_data``): each secret becomes a numbered placeholder that
the image's own env (which the cache key covers) turns back into the value on read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from imagelint.lazyre import lazy_pattern

# Whole words only, so TOKENIZERS_PARALLELISM or MONKEY_PATCH are not secrets ("CC" in
# "ACCESS_KEY"-style substring bugs are a known false-positive source in peers).
_SECRET_WORDS = frozenset({
    "TOKEN", "TOKENS", "PASSWORD", "PASSWD", "PASS", "SECRET", "SECRETS", "KEY", "APIKEY", "CREDENTIAL",
    "CREDENTIALS", "CREDS", "PRIVATE", "AUTH", "PAT",
})
# Values too common to be a secret worth hiding (and hiding them would garble messages).
_NOT_SECRET_VALUES = frozenset({"true", "false", "none", "null", "yes", "no"})
REDACTED = "[redacted]"
_WORD_SPLIT = lazy_pattern(r"[^A-Z0-9]+")
_ASSIGNMENT = lazy_pattern(r"([A-Za-z_][A-Za-z0-9_.-]*)=([^\s\"\\]+)")  # NAME=value, to a space or a quote


def looks_secret(name: str) -> bool:
    return any(word in _SECRET_WORDS for word in _WORD_SPLIT.split(name.upper()))


def secret_env_values(env: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """The secret values among ``(name, value)`` env pairs: longest first, then in text order (stable)."""
    values = {value for name, value in env
              if looks_secret(name) and len(value) >= 4 and value.lower() not in _NOT_SECRET_VALUES}
    return tuple(sorted(values, key=lambda v: (-len(v), v)))


def may_hold_secrets(text: str, labels: Mapping[str, str]) -> bool:
    """Whether an image config's text writes a secret-looking ``NAME=value`` anywhere (an env entry,
    a build history's ``|1 HF_TOKEN=… /bin/sh -c …``, an ``ENV`` or ``ARG`` line) or has a label
    with a secret-looking name: conservative, for deciding what may be kept on disk whole."""
    if any(looks_secret(name) and value for name, value in labels.items()):
        return True
    return any(looks_secret(m.group(1)) and m.group(2).lower() not in _NOT_SECRET_VALUES
               for m in _ASSIGNMENT.finditer(text))


def redact_text(text: str, secrets: Sequence[str]) -> str:
    for value in secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def redact_data(value: Any, secrets: Sequence[str]) -> Any:
    """JSON-like data with every secret replaced in every string (mapping keys included)."""
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, (list, tuple)):
        return [redact_data(v, secrets) for v in value]
    if isinstance(value, Mapping):
        return {redact_text(k, secrets) if isinstance(k, str) else k: redact_data(v, secrets) for k, v in value.items()}
    return value


# --- the reversible mask of the facts cache ------------------------------------------------
# In every string, each secret becomes MARK + its index + ";" and a literal MARK becomes MARK + "e",
# in one left-to-right pass, so no text an image chose can pose as a placeholder.
_MARK = "\ue000"
_UNMASK = lazy_pattern(_MARK + r"(?:(e)|(\d{1,6});)")


def mask_text(text: str, secrets: Sequence[str]) -> str:
    if _MARK not in text and not any(s in text for s in secrets):
        return text
    index = {s: i for i, s in enumerate(secrets)}
    pattern = re.compile("|".join([re.escape(s) for s in secrets] + [re.escape(_MARK)]))
    return pattern.sub(lambda m: _MARK + "e" if m.group(0) == _MARK else f"{_MARK}{index[m.group(0)]};", text)


def unmask_text(text: str, secrets: Sequence[str]) -> str:
    """The text ``mask_text`` was given; ValueError for a placeholder ``secrets`` has no value for."""
    if _MARK not in text:
        return text
    if _MARK in _UNMASK.sub("", text):
        raise ValueError("a stray mask mark")

    def value(m: re.Match[str]) -> str:
        if m.group(1):
            return _MARK
        i = int(m.group(2))
        if i >= len(secrets):
            raise ValueError("a masked secret the image's env does not hold")
        return secrets[i]

    return _UNMASK.sub(value, text)


def mask_data(value: Any, secrets: Sequence[str]) -> Any:
    """JSON-like data with every string (mapping keys included) masked."""
    return _walk(value, lambda s: mask_text(s, secrets))


def unmask_data(value: Any, secrets: Sequence[str]) -> Any:
    return _walk(value, lambda s: unmask_text(s, secrets))


def _walk(value: Any, fn: Any) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return [_walk(v, fn) for v in value]
    if isinstance(value, Mapping):
        return {fn(k) if isinstance(k, str) else k: _walk(v, fn) for k, v in value.items()}
    return value
