"""The facts cache: an image's facts, keyed by everything they are computed from.

A warm run on an image already seen reads no layer and builds no filesystem: the
manifest and config are still fetched (a tag may have moved), and the facts come
from here. The key covers the image config (as parsed), its platform, manifest
digest and annotations, the ordered layer digests, what is captured from layers,
the read limits, and the code that turns layers into facts (a digest of its
sources), so a changed input or another imagelint build gives a miss, never stale
facts. An image whose layers are not all content-addressed is never cached.

Entries are stored in the layer cache (same directory, atomic writes, size bound
and eviction, ``imagelint cache info|clean``); a corrupt or foreign entry is a miss.

Facts from the cache equal the facts the layers give, exactly: nothing is redacted
in them (redaction is for output, ``imagelint.redact``). Secret env values are still
never written: each is masked by a numbered placeholder (``redact.mask_data``) that
is turned back into the value from the image's own config env on read; the key
covers that config, so the placeholders and the values always belong together.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from imagelint.facts.codec import decode, encode
from imagelint.facts.model import ImageFacts
from imagelint.layers.cache import LayerCache, content_addressed
from imagelint.redact import mask_data, secret_env_values, unmask_data
from imagelint.untrusted import loads_json

if TYPE_CHECKING:
    from imagelint.image import Image

FORMAT = "imagelint-facts/1"
# The modules whose code decides an image's facts (relative to the package).
_FACT_CODE = ("facts", "layers", "image.py")


def fact_sources() -> list[Path]:
    """The source files whose code decides an image's facts."""
    import imagelint

    root = Path(imagelint.__file__).parent
    out: list[Path] = []
    for part in _FACT_CODE:
        path = root / part
        out.extend(sorted(path.glob("*.py")) if path.is_dir() else [path])
    return out


@cache
def code_fingerprint() -> str:
    """A digest of imagelint's version and the source of every module that derives facts."""
    import imagelint

    h = hashlib.sha256(imagelint.__version__.encode())
    for f in fact_sources():
        try:
            data = f.read_bytes()
        except OSError:  # no source shipped (a frozen build): the version alone decides
            continue
        h.update(f"{f.parent.name}/{f.name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def facts_key(image: Image, capture: str, limits: Any) -> str | None:
    """The cache key for ``image``'s facts, or None when a layer has no content digest.

    ``capture`` names what is captured from layers: a capture's name (``layers.model``), whose
    rules the code fingerprint covers, or a ``CaptureSpec``'s key.
    """
    digests = [layer.digest for layer in image.layers]
    if not all(content_addressed(d) for d in digests):
        return None
    identity = [
        FORMAT,
        code_fingerprint(),
        capture,
        repr(limits),
        image.digest,
        image.config_digest,
        str(image.platform),
        sorted(image.annotations.items()),
        repr(image.config),
        digests,
    ]
    return hashlib.sha256(json.dumps(identity, default=repr).encode()).hexdigest()


def cached_facts(store: LayerCache, key: str, image: Image) -> ImageFacts | None:
    """The stored facts for ``key`` (as about ``image.ref``), or None on a miss or a bad entry."""
    payload = store.get(_entry(key))
    if payload is None:
        return None
    try:
        doc = loads_json(payload)
        if doc.get("format") != FORMAT or doc.get("key") != key:
            return None
        secrets = _image_secrets(image)
        facts = decode(ImageFacts, unmask_data(doc["facts"], secrets))
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    if facts.secret_values() != secrets:  # the env the entry holds is not this image's
        return None
    return replace(facts, subject=image.ref)


def store_facts(store: LayerCache, key: str, facts: ImageFacts, image: Image) -> None:
    """Store ``facts`` with every secret env value masked wherever it appears (never written)."""
    secrets = _image_secrets(image)
    if facts.secret_values() != secrets:  # facts not from this image's env: nothing to key them on
        return
    data = mask_data(encode(facts), secrets)
    payload = json.dumps({"format": FORMAT, "key": key, "facts": data}, separators=(",", ":"))
    store.put(_entry(key), payload.encode())


def _image_secrets(image: Image) -> tuple[str, ...]:
    from imagelint.facts.fsview import effective_env

    return secret_env_values((e.name, e.value) for e in effective_env(image.config))


def _entry(key: str) -> str:
    # A namespace of its own inside the layer cache: no facts key can equal a layer key.
    return hashlib.sha256(f"facts\0{key}".encode()).hexdigest()
