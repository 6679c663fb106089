"""Docker Compose files → one ``ImageFacts`` (kind ``compose``) per service, with line numbers.

A service gets GPUs through a device request — ``deploy.resources.reservations.devices`` entries
(``driver: nvidia``, ``count``, ``device_ids``, ``capabilities: [gpu]``) or the ``gpus:`` key
(``all``, or the same entries) — or through ``runtime: nvidia`` and ``NVIDIA_VISIBLE_DEVICES``. The
requests are kept as written (``GpuReservation``) for the Compose rules; the service's
``environment``, ``entrypoint``/``command`` and ``image`` feed the same rules as a Kubernetes
container's (IL301, IL302, IL101 on the image's CUDA).

Compose semantics follow the Compose specification and Docker's GPU guide: ``capabilities`` must be
set, ``count`` and ``device_ids`` are mutually exclusive, ``device_ids`` are the host's GPU ids (what
``nvidia-smi`` on the host shows).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from pathlib import PurePath
from types import MappingProxyType
from typing import Any

from imagelint.facts.model import (
    BaseImageFacts,
    EnvSetting,
    GpuFacts,
    GpuIndexSetting,
    ImageFacts,
    Provenance,
)
from imagelint.facts.static_model import ComposeService, GpuReservation
from imagelint.lazyre import lazy_pattern
from imagelint.static.yamlsafe import LineDict, LineList, load_documents

CommandScanner = Callable[[Sequence[str], Provenance], Sequence[GpuIndexSetting]]

_COMPOSE_NAME = lazy_pattern(r"^(?:docker-)?compose(?:[._-][^/]*)?\.ya?ml$", re.IGNORECASE)
_SERVICES = lazy_pattern(r"(?m)^services:\s*(?:#.*)?$")
_SERVICE_KEY = lazy_pattern(r"(?m)^\s+(?:image|build|deploy|runtime|gpus):")


def looks_like_compose(path: str, text: str) -> bool:
    """A Compose file by name (``compose.yaml``, ``docker-compose.gpu.yml``...) or by its top-level
    ``services:`` mapping whose entries have ``image``/``build``/``deploy``."""
    if _COMPOSE_NAME.match(PurePath(path).name):
        return bool(_SERVICES.search(text))
    return bool(_SERVICES.search(text) and _SERVICE_KEY.search(text))


def _prov(source: str, obj: Any, key: Any, locator: str) -> Provenance:
    line = obj.line_of(key) if isinstance(obj, (LineDict, LineList)) and key is not None else getattr(obj, "line", None)
    return Provenance(kind="manifest", source=source, line=line, key=locator)


def _strings(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list):
        return tuple(str(v) for v in value if v is not None)
    if isinstance(value, (str, int)):
        return (str(value),)
    return None


def _is_gpu_request(entry: LineDict) -> bool:
    """Docker hands a device request to the NVIDIA runtime by driver ``nvidia`` or capability ``gpu``;
    a driver written as a variable (``${GPU_DRIVER-nvidia}``) is taken as one too."""
    driver = entry.get("driver")
    caps = _strings(entry.get("capabilities")) or ()
    return "gpu" in caps or driver is None or str(driver) == "nvidia" or "$" in str(driver)


def _requests(svc: LineDict, source: str, where: str) -> tuple[GpuReservation, ...]:
    out: list[GpuReservation] = []
    devices = svc.get("deploy")
    for key in ("resources", "reservations", "devices"):
        devices = devices.get(key) if isinstance(devices, dict) else None
    entries: list[tuple[str, Any, Any, int]] = []
    if isinstance(devices, LineList):
        entries += [("deploy.resources.reservations.devices", devices, e, i) for i, e in enumerate(devices)]
    gpus = svc.get("gpus")
    if isinstance(gpus, LineList):
        entries += [("gpus", gpus, e, i) for i, e in enumerate(gpus)]
    elif gpus is not None:  # ``gpus: all``: every GPU, with the gpu capability implied
        out.append(GpuReservation("gpus", "nvidia", str(gpus), (), ("gpu",), _prov(source, svc, "gpus", f"{where}.gpus")))
    for form, holder, entry, i in entries:
        if not isinstance(entry, LineDict) or not _is_gpu_request(entry):
            continue
        count = entry.get("count")
        ids = _strings(entry.get("device_ids")) or ()
        caps = _strings(entry.get("capabilities")) if "capabilities" in entry else None
        if form == "gpus" and caps is None:
            caps = ("gpu",)  # the gpus key implies the capability
        out.append(GpuReservation(form, None if entry.get("driver") is None else str(entry.get("driver")),
                                  None if count is None else str(count), ids, caps,
                                  _prov(source, holder, i, f"{where}.{form}[{i}]")))
    return tuple(out)


def _environment(svc: LineDict, source: str, where: str) -> list[EnvSetting]:
    env = svc.get("environment")
    out: list[EnvSetting] = []
    if isinstance(env, LineDict):
        for k, v in env.items():
            out.append(EnvSetting(str(k), "" if v is None else str(v), _prov(source, env, k, f"{where}.environment.{k}")))
    elif isinstance(env, LineList):
        for i, item in enumerate(env):
            if isinstance(item, str) and "=" in item:
                k, _, v = item.partition("=")
                out.append(EnvSetting(k, v, _prov(source, env, i, f"{where}.environment[{i}]")))
    return out


def _argv(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError:
            return (value,)
    return None


def read_compose(text: str, source: str, scan_command: CommandScanner | None = None) -> tuple[ImageFacts, ...]:
    """Facts for every service of a Compose file."""
    services: list[tuple[str, LineDict, LineDict]] = []
    for doc in load_documents(text, source, compose_tags=True):
        block = doc.get("services") if isinstance(doc, dict) else None
        if isinstance(block, LineDict):
            services += [(str(name), svc, block) for name, svc in block.items() if isinstance(svc, LineDict)]
    parsed = []
    for name, svc, block in services:
        where = f"services.{name}"
        why = _privileged(svc)
        parsed.append((name, svc, ComposeService(
            name=name,
            provenance=_prov(source, block, name, where),
            gpu_requests=_requests(svc, source, where),
            runtime=str(svc["runtime"]) if svc.get("runtime") else None,
            privileged=_prov(source, svc, "privileged" if "privileged" in svc else "cap_add",
                             f"{where} ({why})") if why else None,
        )))
    pinned: dict[str, list[str]] = {}
    for name, _, service in parsed:
        for gid in dict.fromkeys(i for r in service.gpu_requests for i in r.device_ids):
            pinned.setdefault(gid, []).append(name)
    out = []
    for name, svc, service in parsed:
        shared = {gid: tuple(n for n in names if n != name) for gid, names in pinned.items()
                  if name in names and len(names) > 1}
        if shared:
            from dataclasses import replace

            service = replace(service, shared_ids=MappingProxyType(shared))
        where = f"services.{name}"
        env = _environment(svc, source, where)
        by_name = {e.name: e for e in env}
        settings: list[GpuIndexSetting] = []
        entrypoint, cmd = _argv(svc.get("entrypoint")), _argv(svc.get("command"))
        for key, argv in (("entrypoint", entrypoint), ("command", cmd)):
            if argv and scan_command is not None:
                settings.extend(scan_command(argv, _prov(source, svc, key, f"{where}.{key}")))
        image = svc.get("image")
        base = BaseImageFacts(name=str(image), provenance=(_prov(source, svc, "image", f"{where}.image"),)) \
            if image else BaseImageFacts()
        out.append(ImageFacts(
            subject=f"{source}:{service.provenance.line} service {name}",
            kind="compose",
            env=tuple(env),
            entrypoint=entrypoint,
            cmd=cmd,
            gpu=GpuFacts(
                visible_devices=by_name.get("NVIDIA_VISIBLE_DEVICES"),
                cuda_visible_devices=by_name.get("CUDA_VISIBLE_DEVICES"),
                driver_capabilities=by_name.get("NVIDIA_DRIVER_CAPABILITIES"),
                index_settings=tuple(settings),
            ),
            base=base,
            complete=False,
            compose=service,
        ))
    return tuple(out)


def _privileged(svc: LineDict) -> str | None:
    from imagelint.static.podspecs import privileged_by

    return privileged_by(svc)
