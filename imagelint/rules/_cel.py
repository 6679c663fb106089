"""A small, exact subset of CEL as DRA device selectors use it, evaluated against a pool's GPUs.

Only what can be decided from a pool's GPU model is read: ``productName`` (``==``, ``!=``,
``.matches(re)``, ``.lowerAscii().matches(re)``), ``profile`` (MIG) and ``architecture``
(``==``/``!=``) of ``device.attributes['gpu.nvidia.com']``, joined by ``&&``. Anything else in an
expression (``||``, ``!``, other attributes, version comparisons) makes the answer unknown, never
a guess. GPU Feature Discovery writes product names with ``-`` where NVML (and so the DRA driver)
has spaces; both spellings are compared.
"""

from __future__ import annotations

import re
from typing import Iterable

from imagelint.target import GpuSpec

_ATTR = r"""device\.attributes\[\s*['"]gpu\.nvidia\.com['"]\s*\]\.(\w+)"""
_STR = r"""['"]([^'"]*)['"]"""
_EQ = re.compile(rf"^{_ATTR}\s*(==|!=)\s*{_STR}$")
_MATCH = re.compile(rf"^{_ATTR}(\.lowerAscii\(\))?\.matches\(\s*{_STR}\s*\)$")
_DRIVER = re.compile(r"""^device\.driver\s*==\s*['"]gpu\.nvidia\.com['"]$""")


def _names(product: str) -> tuple[str, ...]:
    """The GFD spelling and the NVML spellings it may stand for ("NVIDIA-A100-SXM4-80GB" is NVML's
    "NVIDIA A100-SXM4-80GB"; "Tesla-T4" is "Tesla T4")."""
    return (product, product.replace("-", " "), product.replace(" ", "-"), product.replace("-", " ", 1))


def _norm(name: str) -> str:
    return re.sub(r"[\s-]+", "-", name.strip().lower())


def _atom(atom: str, gpu: GpuSpec) -> bool | None:
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
        elif attr == "profile":
            hit = value in gpu.mig_profiles
        else:
            return None
        return hit if op == "==" else not hit
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


def selects(expression: str, gpu: GpuSpec) -> bool | None:
    """Whether the CEL expression selects this GPU: True / False / None (cannot tell)."""
    text = " ".join(expression.split())
    if "||" in text or re.search(r"(?<![=!])!(?!=)", text):
        return None
    verdicts = [_atom(a, gpu) for a in text.split("&&")]
    if any(v is False for v in verdicts):
        return False
    return None if any(v is None for v in verdicts) else True


def pool_can_satisfy(expressions: Iterable[str], gpus: Iterable[GpuSpec]) -> bool | None:
    """Some GPU of the pool is selected by every expression (True), none can be (False), unknown."""
    exprs = tuple(expressions)
    answers = []
    for gpu in gpus:
        per = [selects(e, gpu) for e in exprs]
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
