"""The one CaptureSpec: the union of what every fact module needs from layers.

Fixed patterns only, independent of any image's config, so a layer's extract
can be cached by layer digest. Each fact module declares its ``CAPTURE_RULES``
(flake8-style: a checker says what input it needs); order matters because the
reader applies the first rule that matches a path, so ``scan`` rules come first,
then ``content``, then the broad text-facts scans of scripts and configs, then ``record``.
"""

from __future__ import annotations

from types import MappingProxyType

from imagelint.facts import cuda, driverlibs, fatbin, loader, scripts, textscan
from imagelint.layers.captures import CAPTURE_STANDARD, CAPTURE_WITHOUT_GPU_CODE
from imagelint.layers.model import CaptureRule, CaptureSpec

_ACTION_ORDER = {"scan": 0, "head": 1, "content": 2, "record": 3}


def _rank(rule: CaptureRule) -> float:
    # The text-facts scan is a broad capture: it ranks after the narrow content rules (cuda's
    # version.json, ld.so.conf.d/*), which must win their paths.
    if rule.action == "scan" and rule.name == textscan.TEXT_SCANNER:
        return 2.5
    return _ACTION_ORDER[rule.action]


def build_capture_spec(gpu_code: bool = True) -> CaptureSpec:
    """The union of every fact module's capture rules.

    ``gpu_code=False`` leaves out the fatbin scan of every shared library: it is the
    costliest capture (a search through every library byte) and only IL401 needs it,
    and only against a GPU with a known compute capability.
    """
    groups = [driverlibs.capture_rules(), fatbin.FATBIN_CAPTURE_RULES if gpu_code else (), cuda.CAPTURE_RULES,
              loader.CAPTURE_RULES, scripts.CAPTURE_RULES]
    # Each rule once, in first-seen order (a dict, not a list scan: ~150 rules, every import).
    rules = list(dict.fromkeys(rule for group in groups for rule in group))
    rules.sort(key=_rank)  # stable: module order kept within an action
    return CaptureSpec(tuple(rules), MappingProxyType({**driverlibs.SCANNERS, **fatbin.SCANNERS, **scripts.SCANNERS}))


CAPTURE_SPEC = build_capture_spec()
CAPTURE_SPEC_WITHOUT_GPU_CODE = build_capture_spec(gpu_code=False)


def spec_named(name: str) -> CaptureSpec:
    """The capture ``name`` (``layers.captures.CAPTURE_STANDARD`` / ``CAPTURE_WITHOUT_GPU_CODE``)."""
    return {CAPTURE_STANDARD: CAPTURE_SPEC, CAPTURE_WITHOUT_GPU_CODE: CAPTURE_SPEC_WITHOUT_GPU_CODE}[name]


def spec_reads_gpu_code(spec: CaptureSpec) -> bool:
    return any(r.action == "scan" and r.name in fatbin.SCANNERS for r in spec.rules)
