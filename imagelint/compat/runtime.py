"""What the NVIDIA container toolkit does with an image's forward-compat libraries.

Per runtime mode and toolkit release (container-toolkit release notes; nvidia-facts §1.5):

* legacy mode before 1.17.4: libnvidia-container mounts the image's compat libraries over
  the host's when their driver major is newer than the host's;
* 1.17.4 stopped that by default (feature flag ``allow-cuda-compat-libs-from-container``);
* from 1.17.5 the nvidia runtime adds the ``enable-cuda-compat`` createContainer hook in
  every mode (legacy, cdi, jit-cdi, csv), which puts ``/usr/local/cuda/compat`` first on the
  loader path when the compat driver is newer than the host's (by major before 1.19.0; from
  1.19.0 only when its ``.note.cuda.fwd_compatibility`` lists the host branch);
* from 1.17.7 legacy mode's ``cuda-compat-mode`` (default ``ldconfig``) hands the decision back
  to libnvidia-container (by major, no ELF-note check; uncertain matrix row);
* from 1.20.0 every path reads libcuda's ELF metadata when it is there and selects the compat
  libraries only when they suit the installed driver (the note's host branches), legacy too;
* cdi / jit-cdi before 1.17.5 never use them.

Neither path looks at the GPU: on a GPU that forward compatibility does not support, a
compat libcuda the runtime puts on the path fails with error 804. The release boundaries
are the matrix's ``toolkit_features`` rows; the mode/toolkit combinations a pool leaves open
become ``Scenario`` s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from imagelint.compat.evidence import compare, major
from imagelint.compat.pool import HostDriver
from imagelint.deploytarget import NodePool
from imagelint.facts.model import DriverLibrary
from imagelint.versions import version_key

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

# toolkit_features rows this module reads (their ``since`` is the matrix's fact).
MOUNT_OFF = "compat-libs-from-container-off"
HOOK = "cuda-compat-hook"
LEGACY_MODE_SETTING = "legacy-cuda-compat-mode"
NOTE_CHECK = "compat-elf-note-check"
ALWAYS_CHECK = "compat-elf-check-always"
MODE_SINCE = {"cdi": "cdi-generate", "jit-cdi": "jit-cdi-default"}
UNKNOWN_MODES = ("legacy", "cdi", "jit-cdi")


@dataclass(frozen=True)
class Scenario:
    """One runtime situation the pool may be in."""

    mode: str
    toolkit: str | None  # the pool's toolkit, or the first release of an era ("0": before all)
    label: str           # "" when the pool gave both; else the condition in words
    toolkit_known: bool
    era: tuple[str, str | None] | None = None  # [lo, hi) toolkit releases when the toolkit is unknown
    mode_given: bool = True


def _since(matrix: Matrix | None, feature: str) -> str | None:
    known = matrix.toolkit_feature(feature) if matrix is not None else None
    return str(known.since).lstrip("v") if known is not None else None


def _has(matrix: Matrix | None, toolkit: str | None, feature: str) -> bool:
    since = _since(matrix, feature)
    return since is not None and toolkit is not None and compare(toolkit, since) >= 0


def scenarios(pool: NodePool, matrix: Matrix | None) -> list[Scenario]:
    """The situations to judge: one when the pool names mode and toolkit; else one per mode
    it may run and per toolkit era in which compat handling differs."""
    mode = pool.runtime_mode if pool.runtime_mode and pool.runtime_mode != "auto" else None
    if pool.toolkit:
        if mode is None:
            default = matrix.toolkit_default_runtime_mode(pool.toolkit) if matrix is not None else "legacy"
            return [Scenario(default, pool.toolkit, f"in {default} mode (toolkit {pool.toolkit}'s default)", True)]
        return [Scenario(mode, pool.toolkit, "", True)]
    bounds = sorted({b for b in (_since(matrix, f) for f in (MOUNT_OFF, HOOK, LEGACY_MODE_SETTING, NOTE_CHECK, ALWAYS_CHECK)) if b},
                    key=version_key)
    out = []
    for m in ((mode,) if mode else UNKNOWN_MODES):
        first = _since(matrix, MODE_SINCE[m]) if m in MODE_SINCE else None
        edges = ["0", *bounds]
        for i, lo in enumerate(edges):
            hi = edges[i + 1] if i + 1 < len(edges) else None
            if first is not None and hi is not None and compare(hi, first) <= 0:
                continue  # the mode did not exist yet
            start = lo if first is None or compare(lo, first) >= 0 else first
            era = _era(start, hi)
            label = f"with toolkit {era}" if mode else f"in {m} mode with toolkit {era}"
            out.append(Scenario(m, start, label, False, (start, hi), bool(mode)))
    return out


def describe(chosen: list[Scenario], every: list[Scenario], short: bool = False) -> str:
    """The condition a group of scenarios stands for, in few words: whole modes by name,
    neighbouring toolkit eras joined ("in legacy mode with toolkit < 1.17.5"); ``short``: as a
    headline can hold it ("legacy <1.17.5; cdi >=1.17.5; jit-cdi"), a mode's first era as
    "<X" (the mode's toolkit releases start there)."""
    if not chosen or len(chosen) == len(every):
        return ""
    if all(sc.era is None for sc in chosen):
        return " or ".join(dict.fromkeys(sc.label for sc in chosen if sc.label))
    if short:
        return _describe_short(chosen, every)
    parts = []
    for mode in dict.fromkeys(sc.mode for sc in every):
        mine = [sc for sc in chosen if sc.mode == mode]
        if not mine:
            continue
        total = [sc for sc in every if sc.mode == mode]
        where = f"in {mode} mode" if not mine[0].mode_given else ""
        if len(mine) == len(total):
            parts.append(where or "with any toolkit")
            continue
        eras = _merged_eras(mine)
        text = " or ".join(_era(lo or "0", hi) for lo, hi in eras)
        parts.append(f"{where} with toolkit {text}".strip())
    return "; ".join(parts)


def _merged_eras(scenarios: list[Scenario]) -> list[list[str | None]]:
    """The toolkit eras of ``scenarios`` as [low, high) ranges, adjacent eras joined."""
    eras: list[list[str | None]] = []
    for sc in sorted(scenarios, key=lambda s: version_key(s.era[0]) if s.era else ()):
        lo, hi = sc.era if sc.era else ("0", None)
        if eras and eras[-1][1] == lo:
            eras[-1][1] = hi
        else:
            eras.append([lo, hi])
    return eras


def _describe_short(chosen: list[Scenario], every: list[Scenario]) -> str:
    parts = []
    for mode in dict.fromkeys(sc.mode for sc in every):
        mine = [sc for sc in chosen if sc.mode == mode]
        if not mine:
            continue
        total = [sc for sc in every if sc.mode == mode]
        name = "" if mine[0].mode_given else mode
        if len(mine) == len(total):
            parts.append(name or "any toolkit")
            continue
        first = min((sc.era[0] for sc in total if sc.era), key=version_key, default="0")
        eras = _merged_eras(mine)
        text = " or ".join(_era_short("0" if lo == first else (lo or "0"), hi) for lo, hi in eras)
        parts.append(f"{name or 'toolkit'} {text}")
    return "; ".join(parts)


def _era_short(lo: str, hi: str | None) -> str:
    if lo == "0":
        return f"<{hi}" if hi is not None else "any"
    return f">={lo}" if hi is None else f">={lo},<{hi}"


def _era(lo: str, hi: str | None) -> str:
    if lo == "0":
        return f"< {hi}"
    return f">= {lo}" if hi is None else f">= {lo}, < {hi}"



@dataclass(frozen=True)
class Injection:
    """Whether the runtime puts the image's compat libcuda on the loader path."""

    injects: bool
    who: str     # who does (or would)
    why: str     # why not, when it does not
    uncertain: str | None = None  # the uncertain toolkit_features row the decision rests on


def runtime_injection(sc: Scenario, lib: DriverLibrary, host: HostDriver, matrix: Matrix | None) -> Injection:
    hook = f"the enable-cuda-compat hook (toolkit >= {_since(matrix, HOOK) or '?'})"
    note_check = _has(matrix, sc.toolkit, NOTE_CHECK)
    rests_on: str | None = None
    if sc.mode in ("legacy", "csv") and _has(matrix, sc.toolkit, LEGACY_MODE_SETTING):
        # Legacy mode's default cuda-compat-mode=ldconfig: libnvidia-container decides, by major only.
        who = (f"libnvidia-container (legacy cuda-compat-mode=ldconfig, toolkit >= "
               f"{_since(matrix, LEGACY_MODE_SETTING)})")
        # By major only, until the toolkit reads the ELF metadata on every path (1.20.0).
        note_check = _has(matrix, sc.toolkit, ALWAYS_CHECK)
        rests_on = _uncertain_row(matrix, LEGACY_MODE_SETTING)
    elif _has(matrix, sc.toolkit, HOOK):
        who = hook
    elif sc.mode in ("legacy", "csv"):
        if _has(matrix, sc.toolkit, MOUNT_OFF):
            return Injection(False, "libnvidia-container",
                             f"toolkit {_since(matrix, MOUNT_OFF)} stopped mounting compat libraries from the container "
                             "(feature flag allow-cuda-compat-libs-from-container)")
        who = f"libnvidia-container (legacy, toolkit < {_since(matrix, MOUNT_OFF) or '?'})"
    else:
        return Injection(False, hook, f"{sc.mode} mode before toolkit {_since(matrix, HOOK) or '?'} never loads compat libraries")
    note = lib.fwd_compat
    if note_check and note is not None and note.driver_branches:
        if host.branch not in note.driver_branches:
            listed = ", ".join(f"R{b}" for b in note.driver_branches)
            return Injection(False, who, f"its ELF note lists host branches {listed}, not R{host.branch}", rests_on)
        if lib.version and compare(lib.version, host) <= 0:
            return Injection(False, who, f"compat driver {lib.version} is not newer than the host's {host.label}", rests_on)
        return Injection(True, who, "", rests_on)
    lib_major = major(lib.version or "")
    if lib_major is None or lib_major <= host.branch:
        return Injection(False, who, f"compat driver {lib.version} is not from a newer branch than the host's R{host.branch}",
                         rests_on)
    return Injection(True, who, "", rests_on)


def _uncertain_row(matrix: Matrix | None, feature: str) -> str | None:
    known = matrix.toolkit_feature(feature) if matrix is not None else None
    if known is not None and known.uncertain:
        return f"the toolkit release from which {feature} applies ({known.source})"
    return None
