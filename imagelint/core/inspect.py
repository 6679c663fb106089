"""``inspect``: open an image and read its layers once into the facts imagelint sees.

``inspect_reference`` is the core behind ``imagelint inspect`` and every ``check``; the facts are
rendered by ``imagelint.report.facts`` (``facts_to_json``, documented by
``docs/inspect-schema.json``, and ``facts_to_text``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from imagelint import progress
from imagelint.facts.model import ImageFacts
from imagelint.layers.cache import LayerCache, open_cache
from imagelint.layers.captures import CAPTURE_STANDARD
from imagelint.sources import SourceOptions, open_images

if TYPE_CHECKING:
    from imagelint.image import Image
    from imagelint.layers.model import CaptureSpec

def layer_cache_for(options: SourceOptions) -> LayerCache | None:
    """The layer cache these options ask for: the user cache dir by default, None with no_cache.

    ``options.cache_dir`` picks the directory (else ``$IMAGELINT_CACHE_DIR``, else the XDG
    cache dir); ``options.no_cache`` turns the cache off, as does ``IMAGELINT_NO_CACHE=1``.
    """
    return open_cache(options.cache_dir, options.no_cache)


def inspect_reference(
    reference: str,
    options: SourceOptions,
    read_layers: bool = True,
    *,
    cache: LayerCache | None | bool = True,
    workers: int | None = None,
    capture: str | CaptureSpec = CAPTURE_STANDARD,
) -> list[ImageFacts]:
    """Facts for every image the reference selects (one, or one per platform with all_platforms).

    With ``read_layers=False`` only the manifest and config are fetched: no layer is
    opened. Otherwise every layer is streamed once, ``workers`` at a time, and what
    was captured from it is kept in the layer cache keyed by layer digest, so the
    next image on the same base reads only its own layers; the image's facts are
    kept too (``imagelint.facts.cache``), so a warm run on the same image reads no
    layer at all. ``cache=True`` means "as ``options`` say" (``layer_cache_for``),
    ``None``/``False`` means no cache, or pass a ``LayerCache``. What is captured:
    ``capture``, a named capture (``core.check.capture_for``: what the selected rules declare
    they need; the standard one captures everything) or a ``CaptureSpec``. The caches key entries
    by what was captured, so a narrower capture never serves a wider one; a name keys them
    without importing the fact modules, which a cache hit never needs.
    """
    progress.reading(reference)  # what the CLI's progress line names (it counts inflated bytes)
    try:
        images = open_images(reference, options)
        platforms = tuple(i.platform for i in images)
        if read_layers:
            store = layer_cache_for(options) if cache is True else (cache if isinstance(cache, LayerCache) else None)
            facts_of = _facts_reader(options, store, workers, capture)
        else:
            facts_of = _config_facts
        return [_with_platforms(facts_of(image), platforms) for image in images]
    finally:
        progress.reading(None)


def _config_facts(image: Image) -> ImageFacts:
    from imagelint.facts.collect import collect_image_facts

    return collect_image_facts(image, None)


def _facts_reader(options: SourceOptions, store: LayerCache | None, workers: int | None,
                  capture: str | CaptureSpec) -> Callable[[Image], ImageFacts]:
    """image -> facts: from the facts cache, else by reading the layers (through the layer cache)."""
    key_of_capture = capture if isinstance(capture, str) else capture.key()

    def facts_of(image: Image) -> ImageFacts:
        key = None
        if store is not None:
            from imagelint.facts.cache import cached_facts, facts_key

            key = facts_key(image, key_of_capture, options.limits)
            found = cached_facts(store, key, image) if key is not None else None
            if found is not None:
                return found
        facts = _read_facts(image, options, store, workers, capture)
        if store is not None and key is not None:
            from imagelint.facts.cache import store_facts

            store_facts(store, key, facts, image)
        return facts

    return facts_of


def _read_facts(image: Image, options: SourceOptions, store: LayerCache | None, workers: int | None,
                capture: str | CaptureSpec) -> ImageFacts:
    from dataclasses import replace

    from imagelint.facts.capture import spec_named, spec_reads_gpu_code
    from imagelint.facts.collect import collect_image_facts
    from imagelint.layers.cache import caching_extractor
    from imagelint.layers.reader import (
        DEFAULT_WORKERS,
        extract_layer,
        read_image_filesystem,
    )

    chosen = spec_named(capture) if isinstance(capture, str) else capture
    extract = caching_extractor(store, extract_layer) if store is not None else extract_layer
    fs = read_image_filesystem(image, chosen, options.limits, workers=workers or DEFAULT_WORKERS, extract=extract)
    facts = collect_image_facts(image, fs)
    return facts if spec_reads_gpu_code(chosen) else replace(facts, gpu_code_read=False)


def _with_platforms(facts: ImageFacts, platforms: tuple[Any, ...]) -> ImageFacts:
    from dataclasses import replace

    return replace(facts, platforms=platforms)
