"""The facts of one image as ``imagelint inspect`` shows them: ``facts_to_json`` (its shape is
``docs/inspect-schema.json``) and ``facts_to_text``. Secret-looking env values are redacted, as in
every report; each text line is escaped.
"""

from __future__ import annotations

from typing import Any

from imagelint.facts.model import EnvSetting, ImageFacts, LoaderPathEntry, Provenance

SCHEMA_VERSION = 1  # of facts_to_json's document

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
