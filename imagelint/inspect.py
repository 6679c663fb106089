"""``inspect``: open an image, read its layers once, and show the facts imagelint sees.

``inspect_reference`` is the core behind ``imagelint inspect``; ``facts_to_json``
(documented by ``docs/inspect-schema.json``) and ``facts_to_text`` render it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from imagelint.facts.collect import collect_image_facts
from imagelint.facts.model import EnvSetting, ImageFacts, Provenance
from imagelint.sources import SourceOptions, open_images

if TYPE_CHECKING:
    from imagelint.layers.cache import LayerCache
    from imagelint.layers.model import CaptureSpec

SCHEMA_VERSION = 1

def layer_cache_for(options: SourceOptions) -> LayerCache | None:
    """The layer cache these options ask for: the user cache dir by default, None with no_cache.

    ``options.cache_dir`` picks the directory (else ``$IMAGELINT_CACHE_DIR``, else the XDG
    cache dir); ``options.no_cache`` turns the cache off, as does ``IMAGELINT_NO_CACHE=1``.
    """
    from imagelint.layers.cache import LayerCache, default_cache_dir

    if options.no_cache or os.environ.get("IMAGELINT_NO_CACHE", "") not in ("", "0"):
        return None
    return LayerCache(options.cache_dir if options.cache_dir else default_cache_dir())


def inspect_reference(
    reference: str,
    options: SourceOptions,
    read_layers: bool = True,
    *,
    cache: LayerCache | None | bool = True,
    workers: int | None = None,
    spec: CaptureSpec | None = None,
) -> list[ImageFacts]:
    """Facts for every image the reference selects (one, or one per platform with all_platforms).

    With ``read_layers=False`` only the manifest and config are fetched: no layer is
    opened. Otherwise every layer is streamed once, ``workers`` at a time, and what
    was captured from it is kept in the layer cache keyed by layer digest, so the
    next image on the same base reads only its own layers. ``cache=True`` means
    "as ``options`` say" (``layer_cache_for``), ``None``/``False`` means no cache, or
    pass a ``LayerCache``. ``spec`` narrows what is captured (default: ``CAPTURE_SPEC``,
    everything every fact module needs); the cache keys entries by spec, so a narrower
    spec never reads a wider one's entries as complete.
    """
    images = open_images(reference, options)
    platforms = tuple(i.platform for i in images)
    read = _layer_reader(options, cache, workers, spec) if read_layers else None
    from dataclasses import replace

    from imagelint.facts.capture import CAPTURE_SPEC, spec_reads_gpu_code

    gpu_code_read = read is not None and spec_reads_gpu_code(spec or CAPTURE_SPEC)
    out = []
    for image in images:
        fs = read(image) if read is not None else None
        facts = collect_image_facts(image, fs)
        if not gpu_code_read:
            facts = replace(facts, gpu_code_read=False)
        out.append(_with_platforms(facts, platforms))
    return out


def _layer_reader(options: SourceOptions, cache: LayerCache | None | bool, workers: int | None,
                  spec: CaptureSpec | None):  # type: ignore[no-untyped-def]
    from imagelint.facts.capture import CAPTURE_SPEC
    from imagelint.layers.cache import LayerCache, caching_extractor
    from imagelint.layers.reader import DEFAULT_WORKERS, extract_layer, read_image_filesystem

    chosen = layer_cache_for(options) if cache is True else (cache if isinstance(cache, LayerCache) else None)
    extract = caching_extractor(chosen, extract_layer) if chosen is not None else extract_layer

    def read(image):  # type: ignore[no-untyped-def]
        return read_image_filesystem(image, spec or CAPTURE_SPEC, options.limits, workers=workers or DEFAULT_WORKERS,
                                     extract=extract)

    return read


def _with_platforms(facts: ImageFacts, platforms: tuple[Any, ...]) -> ImageFacts:
    from dataclasses import replace

    return replace(facts, platforms=platforms)


# --- JSON ------------------------------------------------------------------------------------


def _prov(p: Provenance | None) -> dict[str, Any] | None:
    return p.to_json() if p is not None else None


def _shown(name: str, value: str) -> str:
    """The value to print: secret-looking names (``*_TOKEN``, ``*PASSWORD``...) are redacted, as in reports."""
    from imagelint.engine import REDACTED, looks_secret

    return REDACTED if looks_secret(name) and value else value


def _env(e: EnvSetting | None) -> dict[str, Any] | None:
    return {"name": e.name, "value": _shown(e.name, e.value), "provenance": _prov(e.provenance)} if e is not None else None


def facts_to_json(facts: ImageFacts) -> dict[str, Any]:
    """A JSON-ready dict; its shape is ``docs/inspect-schema.json``."""
    return {
        "schema_version": SCHEMA_VERSION,
        "subject": facts.subject,
        "kind": facts.kind,
        "platform": str(facts.platform) if facts.platform else None,
        "platforms": [str(p) for p in facts.platforms],
        "digest": facts.digest,
        "complete": facts.complete,
        "entrypoint": list(facts.entrypoint) if facts.entrypoint is not None else None,
        "cmd": list(facts.cmd) if facts.cmd is not None else None,
        "working_dir": facts.working_dir,
        "env": [_env(e) for e in facts.env],
        "labels": {k: _shown(k, v) for k, v in sorted(facts.labels.items())},
        "cuda": {
            "versions": [
                {"version": v.version, "source": v.source, "precision": v.precision, "component": v.component,
                 "provenance": _prov(v.provenance)}
                for v in facts.cuda.versions
            ],
            "requires": [_env(e) for e in facts.cuda.requires],
            "cuda_version_env": _env(facts.cuda.cuda_version_env),
            "disable_require": _env(facts.cuda.disable_require),
            "disable_requires_plural": _env(facts.cuda.disable_requires_plural),
        },
        "driver_libraries": [
            {
                "name": d.name, "path": "/" + d.path, "role": d.role, "version": d.version,
                "on_loader_path": d.on_loader_path, "is_symlink": d.is_symlink, "provenance": _prov(d.provenance),
                "fwd_compat": None if d.fwd_compat is None else {
                    "cuda_version": d.fwd_compat.cuda_version, "driver_branches": list(d.fwd_compat.driver_branches),
                    "devices": list(d.fwd_compat.devices), "raw": d.fwd_compat.raw,
                },
            }
            for d in facts.driver_libraries
        ],
        "loader": {
            "directories": ["/" + d for d in facts.loader.directories],
            "ld_library_path": [{"directory": "/" + e.directory, "origin": e.origin, "provenance": _prov(e.provenance)}
                                for e in facts.loader.ld_library_path],
            "ld_so_conf": [{"directory": "/" + e.directory, "origin": e.origin, "provenance": _prov(e.provenance)}
                           for e in facts.loader.ld_so_conf],
            "defaults": ["/" + d for d in facts.loader.defaults],
        },
        "gpu": {
            "visible_devices": _env(facts.gpu.visible_devices),
            "cuda_visible_devices": _env(facts.gpu.cuda_visible_devices),
            "driver_capabilities": _env(facts.gpu.driver_capabilities),
            "index_settings": [
                {"kind": s.kind, "value": s.value, "indices": list(s.indices), "text": s.text,
                 "referenced": s.referenced, "provenance": _prov(s.provenance)}
                for s in facts.gpu.index_settings
            ],
            "followed_files": [_prov(p) for p in facts.gpu.followed_files],
            "needs_capabilities": [{"capability": c, "provenance": _prov(p)} for c, p in facts.gpu.needs_capabilities],
        },
        "gpu_code": [
            {"path": "/" + c.path.lstrip("/"), "sass": list(c.sass), "ptx": list(c.ptx), "provenance": _prov(c.provenance)}
            for c in facts.gpu_code
        ],
        "gpu_code_read": facts.gpu_code_read,
        "base": {
            "name": facts.base.name, "digest": facts.base.digest, "layer_count": facts.base.layer_count,
            "provenance": [_prov(p) for p in facts.base.provenance],
        },
        "warnings": list(facts.warnings),
    }


# --- text --------------------------------------------------------------------------------------


def facts_to_text(facts: ImageFacts) -> str:
    """For people: what was found and where each fact came from."""
    lines = [f"{facts.subject}"]
    lines.append(f"  platform: {facts.platform or '-'}" + (f"  (index has: {', '.join(str(p) for p in facts.platforms)})" if len(facts.platforms) > 1 else ""))
    if facts.digest:
        lines.append(f"  digest:   {facts.digest}")
    if not facts.complete:
        lines.append("  layers:   not read (config only): file facts are missing")
    base = facts.base
    if base.name or base.digest or base.provenance:
        desc = base.name or "unknown name"
        if base.digest:
            desc += f" @ {base.digest}"
        lines.append(f"  base:     {desc}  [{'; '.join(p.describe() for p in base.provenance)}]")
    lines.append("")
    lines.append("CUDA")
    if not facts.cuda.versions:
        lines.append("  (no CUDA version evidence)")
    for v in facts.cuda.versions:
        what = f"{v.version}" + (f" ({v.component})" if v.component else "")
        lines.append(f"  {what:<26} {v.source:<13} {v.provenance.describe()}")
    for e in facts.cuda.requires:
        value = e.value if len(e.value) <= 100 else e.value[:97] + "..."
        lines.append(f"  {e.name}={value}")
    for e in (facts.cuda.disable_require, facts.cuda.disable_requires_plural):
        if e is not None:
            lines.append(f"  {e.name}={e.value}")
    lines.append("")
    lines.append("Driver libraries")
    if not facts.driver_libraries:
        lines.append("  (none)" if facts.complete else "  (not read)")
    for d in facts.driver_libraries:
        flags = [d.role, f"version {d.version}" if d.version else "no version",
                 "on loader path" if d.on_loader_path else "not on loader path"]
        if d.is_symlink:
            flags.append("symlink")
        lines.append(f"  /{d.path}  [{', '.join(flags)}]  {d.provenance.describe()}")
        if d.fwd_compat:
            n = d.fwd_compat
            lines.append(f"      fwd-compat note: CUDA {n.cuda_version}, host branches {list(n.driver_branches)}, devices {list(n.devices)}")
    lines.append("")
    lines.append("Loader search path")
    for e in facts.loader.ld_library_path:
        lines.append(f"  /{e.directory:<45} LD_LIBRARY_PATH")
    for e in facts.loader.ld_so_conf:
        lines.append(f"  /{e.directory:<45} {e.provenance.describe()}")
    lines.append(f"  {' '.join('/' + d for d in facts.loader.defaults)}  (defaults)")
    lines.append("")
    lines.append("GPU visibility")
    for label, e in (("NVIDIA_VISIBLE_DEVICES", facts.gpu.visible_devices), ("CUDA_VISIBLE_DEVICES", facts.gpu.cuda_visible_devices),
                     ("NVIDIA_DRIVER_CAPABILITIES", facts.gpu.driver_capabilities)):
        lines.append(f"  {label}={e.value}" if e is not None else f"  {label} (unset)")
    for s in facts.gpu.index_settings:
        ref = "" if s.referenced else "  (not referenced by entrypoint/cmd)"
        lines.append(f"  {s.kind:<22} {s.text:<30} {s.provenance.describe()}{ref}")
    for c, p in facts.gpu.needs_capabilities:
        lines.append(f"  needs capability '{c}'  {p.describe()}")
    if facts.gpu.followed_files:
        lines.append("  followed: " + ", ".join(p.describe() for p in facts.gpu.followed_files))
    if facts.gpu_code:
        lines.append("")
        lines.append("Compiled GPU code (fatbin headers)")
        for c in facts.gpu_code:
            archs = ", ".join(list(c.sass) + [f"{p} (PTX)" for p in c.ptx]) or "none"
            lines.append(f"  {archs:<40} {c.provenance.describe()}")
    if facts.warnings:
        lines.append("")
        lines.append("Warnings")
        lines += [f"  {w}" for w in facts.warnings]
    return "\n".join(lines) + "\n"
