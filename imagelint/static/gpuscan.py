"""GPU-index and capability scanning for static files, reusing the image facts' scanners.

The patterns (``imagelint.facts.gpuindex``) and the command-line following
(``imagelint.facts.scripts``) are shared with the image path so a Dockerfile
``CMD``, a pod's ``args`` and an image's Cmd report the same settings; only
the provenance differs (a repository file and line instead of a config field).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from imagelint.facts.model import GpuFacts, GpuIndexSetting, Provenance


def scan_command(argv: Sequence[str], provenance: Provenance) -> list[GpuIndexSetting]:
    """GPU settings written on a command line (exec form, or ``sh -c "..."``)."""
    from imagelint.facts import scripts

    found = scripts.gpu_facts((), tuple(argv), None, "", None, [])
    return [replace(s, provenance=provenance) for s in found.index_settings]


def command_needs(argv: Sequence[str], provenance: Provenance) -> list[tuple[str, Provenance]]:
    """Driver capabilities a command line needs (``deepstream-app`` → ``video``)."""
    from imagelint.facts import gpuindex

    text = " ".join(argv)
    return [(capability, provenance) for capability, _ in gpuindex.find_capability_needs(text, gpuindex.SHELL)]


def scan_file(text: str, path: str, language: str) -> GpuFacts:
    """GPU settings and capability needs in a script or app config, with line numbers."""
    from imagelint.facts import gpuindex

    settings = []
    for m in gpuindex.find_gpu_settings(text, language):
        prov = Provenance(kind="appconfig", source=path, line=m.line)
        settings.append(GpuIndexSetting(m.kind, m.value, m.indices, m.text, prov))
    needs = tuple(
        (capability, Provenance(kind="appconfig", source=path, line=line))
        for capability, line in gpuindex.find_capability_needs(text, language)
    )
    return GpuFacts(index_settings=tuple(settings), needs_capabilities=needs)


def language_for(path: str, kind: str, head: bytes) -> str:
    from imagelint.facts import gpuindex

    if kind == "appconfig":
        return gpuindex.YAML if path.lower().endswith((".yml", ".yaml")) else gpuindex.INI
    return gpuindex.language_of(path, head)
