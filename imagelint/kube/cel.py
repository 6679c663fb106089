"""A small, exact subset of CEL as DRA device selectors use it, evaluated against a pool's GPUs.

Only what can be decided from a pool's GPU model and driver is read: ``productName`` (``==``,
``!=``, ``.matches(re)``, ``.lowerAscii().matches(re)``), ``profile`` (MIG) and ``architecture``
(``==``/``!=``), and the version attributes ``driverVersion`` / ``cudaComputeCapability`` /
``cudaDriverVersion`` compared with ``.compareTo(semver("X")) <op> 0`` or ``.isGreaterThan`` /
``.isLessThan`` / ``.isEqualTo`` — of ``device.attributes['gpu.nvidia.com']``, joined by ``&&``. Anything else in an
expression (``||``, ``!``, other attributes, version comparisons) makes the answer unknown, never
a guess. GPU Feature Discovery writes product names with ``-`` where NVML (and so the DRA driver)
has spaces; both spellings are compared.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from imagelint.deploytarget import GpuSpec
from imagelint.lazyre import lazy_pattern

_ATTR = r"""device\.attributes\[\s*['"]gpu\.nvidia\.com['"]\s*\]\.(\w+)"""
_STR = r"""['"]([^'"]*)['"]"""
_EQ = lazy_pattern(rf"^{_ATTR}\s*(==|!=)\s*{_STR}$")
_MATCH = lazy_pattern(rf"^{_ATTR}(\.lowerAscii\(\))?\.matches\(\s*{_STR}\s*\)$")
_DRIVER = lazy_pattern(r"""^device\.driver\s*==\s*['"]gpu\.nvidia\.com['"]$""")


def _names(product: str) -> tuple[str, ...]:
    """The GFD spelling and the NVML spellings it may stand for ("NVIDIA-A100-SXM4-80GB" is NVML's
    "NVIDIA A100-SXM4-80GB"; "Tesla-T4" is "Tesla T4")."""
    return (product, product.replace("-", " "), product.replace(" ", "-"), product.replace("-", " ", 1))


def _norm(name: str) -> str:
    return re.sub(r"[\s-]+", "-", name.strip().lower())


_VERSION_CMP = lazy_pattern(rf"""^{_ATTR}\.compareTo\(\s*semver\(\s*{_STR}\s*\)\s*\)\s*(==|!=|>=|<=|>|<)\s*0$""")
_VERSION_FN = lazy_pattern(rf"""^{_ATTR}\.(isGreaterThan|isLessThan|isEqualTo)\(\s*semver\(\s*{_STR}\s*\)\s*\)$""")


def _vkey(text: str) -> tuple[int, ...] | None:
    parts = re.findall(r"[0-9]{1,18}", text)  # ASCII and bounded: int() of it cannot fail
    return tuple(int(p) for p in parts[:3]) + (0,) * (3 - len(parts[:3])) if parts else None


def _version_of(attr: str, gpu: GpuSpec, driver: str | None, cuda: str | None) -> tuple[int, ...] | None:
    value = {"driverVersion": driver, "cudaComputeCapability": gpu.compute_capability,
             "cudaDriverVersion": cuda}.get(attr)
    return _vkey(value) if value else None


def _compare(have: tuple[int, ...], op: str, want: tuple[int, ...]) -> bool:
    c = (have > want) - (have < want)
    return {"==": c == 0, "!=": c != 0, ">=": c >= 0, "<=": c <= 0, ">": c > 0, "<": c < 0}[op]


def _atom(atom: str, gpu: GpuSpec, driver: str | None = None, cuda: str | None = None) -> bool | None:
    atom = atom.strip()
    while atom.startswith("(") and atom.endswith(")"):
        atom = atom[1:-1].strip()
    if _DRIVER.match(atom):
        return True
    m = _EQ.match(atom)
    if m:
        attr, op, value = m.groups()
        if attr == "productName" and gpu.product:
            hit = _norm(gpu.product) == _norm(value)
        elif attr == "architecture" and gpu.family:
            hit = gpu.family.lower() == value.lower()
        elif attr == "profile" and gpu.mig_profiles:  # the pool's MIG layout known: judge it
            hit = value in gpu.mig_profiles
        else:
            return None
        return hit if op == "==" else not hit
    m = _VERSION_CMP.match(atom)
    n = None if m else _VERSION_FN.match(atom)
    if m or n:
        if m:
            attr, literal, op = m.groups()
        elif n:
            attr, fn, literal = n.groups()
            op = {"isGreaterThan": ">", "isLessThan": "<", "isEqualTo": "=="}[fn]
        have, want = _version_of(attr, gpu, driver, cuda), _vkey(literal)
        if have is None or want is None:
            return None
        return _compare(have, op, want)
    m = _MATCH.match(atom)
    if m:
        attr, lower, pattern = m.groups()
        if attr != "productName" or not gpu.product:
            return None
        try:
            rx = re.compile(pattern)
        except re.error:
            return None
        return any(rx.search(n.lower() if lower else n) for n in _names(gpu.product))
    return None


def selects(expression: str, gpu: GpuSpec, driver: str | None = None, cuda: str | None = None) -> bool | None:
    """Whether the CEL expression selects this GPU (on a pool with this driver and driver CUDA
    version): True / False / None (cannot tell)."""
    text = " ".join(expression.split())
    if "||" in text or re.search(r"(?<![=!])!(?!=)", text):
        return None
    verdicts = [_atom(a, gpu, driver, cuda) for a in text.split("&&")]
    if any(v is False for v in verdicts):
        return False
    return None if any(v is None for v in verdicts) else True


def pool_can_satisfy(expressions: Iterable[str], gpus: Iterable[GpuSpec], driver: str | None = None,
                     cuda: str | None = None) -> bool | None:
    """Some GPU of the pool is selected by every expression (True), none can be (False), unknown.
    A pool whose GPU models are unknown is judged on its driver alone (a GPU of unknown model)."""
    exprs = tuple(expressions)
    answers: list[bool | None] = []
    for gpu in (tuple(gpus) or (GpuSpec(),)):
        per = [selects(e, gpu, driver, cuda) for e in exprs]
        if any(v is False for v in per):
            answers.append(False)
        elif all(v is True for v in per):
            answers.append(True)
        else:
            answers.append(None)
    if not answers:
        return None
    if any(a is True for a in answers):
        return True
    return False if all(a is False for a in answers) else None


def claim_can_be_allocated(requests: Iterable[tuple[str, ...]], gpus: Iterable[GpuSpec], driver: str | None = None,
                           cuda: str | None = None) -> bool | None:
    """Each request (its CEL selectors) is allocated its own device: the claim fits the pool when
    every request has a GPU it selects (True), cannot when some request has none (False)."""
    gpus = tuple(gpus)
    answers = [pool_can_satisfy(exprs, gpus, driver, cuda) for exprs in requests if exprs]
    if any(a is False for a in answers):
        return False
    return True if answers and all(a is True for a in answers) else None
