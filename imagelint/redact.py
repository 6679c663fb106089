"""Secrets in an image's env: which values they are, and how they are kept out of everything written.

An env var whose name has a secret-looking word (``*_TOKEN``, ``DB_PASSWORD``,
``AWS_SECRET_ACCESS_KEY``...; dockle PR #268) holds a secret: its value is replaced by
``[redacted]`` wherever it appears, in reports, ``inspect`` output and the facts cache.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from imagelint.facts.model import ImageFacts

# Whole words only, so TOKENIZERS_PARALLELISM or MONKEY_PATCH are not secrets ("CC" in
# "ACCESS_KEY"-style substring bugs are a known false-positive source in peers).
_SECRET_WORDS = frozenset({
    "TOKEN", "TOKENS", "PASSWORD", "PASSWD", "PASS", "SECRET", "SECRETS", "KEY", "APIKEY", "CREDENTIAL",
    "CREDENTIALS", "CREDS", "PRIVATE", "AUTH", "PAT",
})
# Values too common to be a secret worth hiding (and hiding them would garble messages).
_NOT_SECRET_VALUES = frozenset({"true", "false", "none", "null", "yes", "no"})
REDACTED = "[redacted]"
_WORD_SPLIT = re.compile(r"[^A-Z0-9]+")


def looks_secret(name: str) -> bool:
    return any(word in _SECRET_WORDS for word in _WORD_SPLIT.split(name.upper()))


def secret_values(facts: ImageFacts) -> tuple[str, ...]:
    """The secret values of ``facts``' env, longest first (so a value inside another is not left half-shown)."""
    values = {e.value for e in facts.env
              if looks_secret(e.name) and len(e.value) >= 4 and e.value.lower() not in _NOT_SECRET_VALUES}
    return tuple(sorted(values, key=len, reverse=True))


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
