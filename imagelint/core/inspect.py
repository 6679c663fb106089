"""``inspect``: open an image, read its layers once, and show the facts imagelint sees.

``inspect_reference`` is the core behind ``imagelint inspect``; ``facts_to_json``
(documented by ``docs/inspect-schema.json``) and ``facts_to_text`` render it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from imagelint import progress
from imagelint.facts.model import EnvSetting, ImageFacts, LoaderPathEntry, Provenance
from imagelint.layers.cache import LayerCache
from imagelint.sources import SourceOptions, open_images

if TYPE_CHECKING:
    from imagelint.image import Image
    from imagelint.layers.model import CaptureSpec

SCHEMA_VERSION = 1


def layer_cache_for(options: SourceOptions) -> LayerCache | None:
    """The layer cache these options ask for: the user cache dir by default, None with no_cache.

    ``options.cache_dir`` picks the directory (else ``$IMAGELINT_CACHE_DIR``, else the XDG
    cache dir); ``options.no_cache`` turns the cache off, as does ``IMAGELINT_NO_CACHE=1``.
    """
    from imagelint.cachedir import cache_disabled, cache_max_bytes, default_cache_dir
    from imagelint.layers.cache import DEFAULT_MAX_BYTES

    if options.no_cache or cache_disabled():
        return None
    return LayerCache(options.cache_dir if options.cache_dir else default_cache_dir(), cache_max_bytes(DEFAULT_MAX_BYTES))


def inspect_reference(
    reference: str,
    options: SourceOptions,
    read_layers: bool = True,
    *,
    cache: LayerCache | None | bool = True,
    workers: int | None = None,
    spec: CaptureSpec | None = None,
    gpu_code: bool = True,
) -> list[ImageFacts]:
    """Facts for every image the reference selects (one, or one per platform with all_platforms).

    With ``read_layers=False`` only the manifest and config are fetched: no layer is
    opened. Otherwise every layer is streamed once, ``workers`` at a time, and what
    was captured from it is kept in the layer cache keyed by layer digest, so the
    next image on the same base reads only its own layers; the image's facts are
    kept too (``imagelint.facts.cache``), so a warm run on the same image reads no
    layer at all. ``cache=True`` means "as ``options`` say" (``layer_cache_for``),
    ``None``/``False`` means no cache, or pass a ``LayerCache``. What is captured:
    ``spec`` if given, else the standard spec, with the fatbin scan of every library
    only when ``gpu_code`` (the costliest capture; only IL401 needs it). The caches
    key entries by what was captured, so a narrower capture never serves a wider one.
    """
    progress.reading(reference)  # what the CLI's progress line names (it counts inflated bytes)
    try:
        images = open_images(reference, options)
        platforms = tuple(i.platform for i in images)
        if read_layers:
            store = layer_cache_for(options) if cache is True else (cache if isinstance(cache, LayerCache) else None)
            facts_of = _facts_reader(options, store, workers, spec, gpu_code)
        else:
            facts_of = _config_facts
        return [_with_platforms(facts_of(image), platforms) for image in images]
    finally:
        progress.reading(None)


def _config_facts(image: Image) -> ImageFacts:
    from imagelint.facts.collect import collect_image_facts

    return collect_image_facts(image, None)


def _facts_reader(options: SourceOptions, store: LayerCache | None, workers: int | None,
                  spec: CaptureSpec | None, gpu_code: bool) -> Callable[[Image], ImageFacts]:
    """image -> facts: from the facts cache, else by reading the layers (through the layer cache)."""
    capture = spec.key() if spec is not None else ("standard" if gpu_code else "standard-without-gpu-code")

    def facts_of(image: Image) -> ImageFacts:
        key = None
        if store is not None:
            from imagelint.facts.cache import cached_facts, facts_key

            key = facts_key(image, capture, options.limits)
            found = cached_facts(store, key, image) if key is not None else None
            if found is not None:
                return found
        facts = _read_facts(image, options, store, workers, spec, gpu_code)
        if store is not None and key is not None:
            from imagelint.facts.cache import store_facts

            store_facts(store, key, facts, image)
        return facts

    return facts_of


def _read_facts(image: Image, options: SourceOptions, store: LayerCache | None, workers: int | None,
                spec: CaptureSpec | None, gpu_code: bool) -> ImageFacts:
    from dataclasses import replace

    from imagelint.facts.capture import (
        CAPTURE_SPEC,
        CAPTURE_SPEC_WITHOUT_GPU_CODE,
        spec_reads_gpu_code,
    )
    from imagelint.facts.collect import collect_image_facts
    from imagelint.layers.cache import caching_extractor
    from imagelint.layers.reader import (
        DEFAULT_WORKERS,
        extract_layer,
        read_image_filesystem,
    )

    chosen = spec if spec is not None else (CAPTURE_SPEC if gpu_code else CAPTURE_SPEC_WITHOUT_GPU_CODE)
    extract = caching_extractor(store, extract_layer) if store is not None else extract_layer
    fs = read_image_filesystem(image, chosen, options.limits, workers=workers or DEFAULT_WORKERS, extract=extract)
    facts = collect_image_facts(image, fs)
    return facts if spec_reads_gpu_code(chosen) else replace(facts, gpu_code_read=False)


def _with_platforms(facts: ImageFacts, platforms: tuple[Any, ...]) -> ImageFacts:
    from dataclasses import replace

    return replace(facts, platforms=platforms)


# --- JSON ------------------------------------------------------------------------------------


def _prov(p: Provenance | None) -> dict[str, Any] | None:
    return p.to_json() if p is not None else None


def _shown(name: str, value: str) -> str:
    """The value to print: secret-looking names (``*_TOKEN``, ``*PASSWORD``...) are redacted, as in reports."""
    from imagelint.redact import REDACTED, looks_secret

    return REDACTED if looks_secret(name) and value else value


def _env(e: EnvSetting | None) -> dict[str, Any] | None:
    return {"name": e.name, "value": _shown(e.name, e.value), "provenance": _prov(e.provenance)} if e is not None else None


def _effective_gpu_env(facts: ImageFacts) -> dict[str, Any]:
    """What the container toolkit makes of the GPU variables (imagelint.facts.gpuenv)."""
    from imagelint.facts.gpuenv import driver_capabilities, nvidia_visible_devices

    caps, visible = driver_capabilities(facts), nvidia_visible_devices(facts)
    return {
        "driver_capabilities": {"how": caps.how, "capabilities": list(caps.capabilities), "all": caps.all},
        "visible_devices": {"how": visible.how, "kind": visible.kind, "devices": list(visible.devices)},
    }


def _loader_entry(e: LoaderPathEntry) -> dict[str, Any]:
    return {"directory": "/" + e.directory, "origin": e.origin, "provenance": _prov(e.provenance),
            "resolved": "/" + e.resolved if e.resolved is not None else None}


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
                "on_loader_path": d.on_loader_path, "loader_path_dirs": ["/" + x for x in d.loader_path_dirs],
                "is_symlink": d.is_symlink, "provenance": _prov(d.provenance),
                "fwd_compat": None if d.fwd_compat is None else {
                    "cuda_version": d.fwd_compat.cuda_version, "driver_branches": list(d.fwd_compat.driver_branches),
                    "devices": list(d.fwd_compat.devices), "raw": d.fwd_compat.raw,
                },
            }
            for d in facts.driver_libraries
        ],
        "loader": {
            "directories": ["/" + d for d in facts.loader.directories],
            "ld_library_path": [_loader_entry(e) for e in facts.loader.ld_library_path],
            "ld_so_conf": [_loader_entry(e) for e in facts.loader.ld_so_conf],
            "defaults": ["/" + d for d in facts.loader.defaults],
            "resolved_directories": ["/" + d for d in facts.loader.resolved_directories],
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
            "effective": _effective_gpu_env(facts),
        },
        "gpu_code": [
            {"path": "/" + c.path.lstrip("/"), "sass": list(c.sass), "ptx": list(c.ptx), "provenance": _prov(c.provenance),
             "ptx_isa": [list(p) for p in c.ptx_isa], "evidence": c.evidence, "not_loaded": list(c.not_loaded),
             "unplaced_containers": c.unplaced_containers}
            for c in facts.gpu_code
        ],
        "gpu_code_read": facts.gpu_code_read,
        "arch_lists": [{"setting": a.setting, "value": a.value, "provenance": _prov(a.provenance)}
                       for a in facts.arch_lists],
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
    for disabling in (facts.cuda.disable_require, facts.cuda.disable_requires_plural):
        if disabling is not None:
            lines.append(f"  {disabling.name}={disabling.value}")
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
    for entry in facts.loader.ld_library_path:
        lines.append(f"  /{entry.directory:<45} LD_LIBRARY_PATH")
    for entry in facts.loader.ld_so_conf:
        lines.append(f"  /{entry.directory:<45} {entry.provenance.describe()}")
    lines.append(f"  {' '.join('/' + d for d in facts.loader.defaults)}  (defaults)")
    lines.append("")
    lines.append("GPU visibility")
    effective = _effective_gpu_env(facts)
    unset_means = {
        "NVIDIA_VISIBLE_DEVICES": "all (legacy image)" if effective["visible_devices"]["how"] == "legacy" else "void: no GPU container",
        "CUDA_VISIBLE_DEVICES": "every GPU the container gets",
        "NVIDIA_DRIVER_CAPABILITIES": "all (legacy image)" if effective["driver_capabilities"]["all"] else "compute,utility",
    }
    for label, env in (("NVIDIA_VISIBLE_DEVICES", facts.gpu.visible_devices), ("CUDA_VISIBLE_DEVICES", facts.gpu.cuda_visible_devices),
                       ("NVIDIA_DRIVER_CAPABILITIES", facts.gpu.driver_capabilities)):
        lines.append(f"  {label}={env.value}" if env is not None else f"  {label} (unset: means {unset_means[label]})")
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
        for code in facts.gpu_code:
            isa = dict(code.ptx_isa)
            archs = ", ".join(list(code.sass) + [f"{p} (PTX{' ISA ' + isa[p] if p in isa else ''})" for p in code.ptx]) or "none"
            lines.append(f"  {archs:<40} {code.provenance.describe()}")
            if code.not_loaded:
                lines.append(f"    not loaded by the CUDA runtime: {', '.join(code.not_loaded)}")
            if code.unplaced_containers:
                lines.append(f"    {code.unplaced_containers} fatbin container(s) whose ELF section could not be read")
    if facts.arch_lists:
        lines.append("")
        lines.append("GPU architectures named by build settings (secondary evidence)")
        for a in facts.arch_lists:
            lines.append(f"  {a.setting}={a.value:<30} {a.provenance.describe()}")
    if facts.warnings:
        lines.append("")
        lines.append("Warnings")
        lines += [f"  {w}" for w in facts.warnings]
    from imagelint.escape import printable_lines

    # Each element is one line: a newline or control character inside a value is shown escaped.
    return printable_lines(lines) + "\n"
