"""NVIDIA_REQUIRE_* evaluation, exactly as the NVIDIA container stack does it.

Two evaluators exist upstream and they disagree, so both are modelled:

* **legacy** (``nvidia-container-runtime-hook`` and ``docker --gpus``): every requirement string is
  handed to ``nvidia-container-cli configure --require=...`` and evaluated by libnvidia-container
  (``src/cli/dsl.c`` + ``src/cli/configure.c``). Space separates OR terms, comma separates AND
  factors, names are ASCII case-insensitive, versions use ``dsl_compare_version``, brand only
  supports ``=``/``!=``, evaluation short-circuits (an unknown name is only an error when reached),
  every visible GPU must satisfy every requirement, and with no visible GPU brand/arch hold.
* **csv** (Tegra): evaluated in Go (nvidia-container-toolkit ``internal/requirements``). Only ``cuda``
  and ``arch`` (device 0) are filled in; names are case-sensitive; unknown names are dropped;
  every factor is parsed (and may fail) before anything is evaluated; versions are Masterminds semver.
* **cdi / jit-cdi**: no requirement check at all (the default of ``nvidia-container-runtime`` since
  toolkit 1.18.0), see ``runtime_enforces_requirements``.

Where the requirements come from follows the toolkit's ``GetRequirements``: ``NVIDIA_DISABLE_REQUIRE``
(Go ``strconv.ParseBool``) turns everything off; every ``NVIDIA_REQUIRE_*`` value except
``NVIDIA_REQUIRE_JETPACK*`` is collected; a "legacy" image (``CUDA_VERSION`` set, ``NVIDIA_REQUIRE_CUDA``
empty or unset) also gets ``cuda>=MAJOR.MINOR``.

Nothing in this module raises for bad requirement text: outcomes carry ``error``. Only
``requirements_from_env`` raises ``RequireEnvError`` (the toolkit itself fails there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from imagelint.errors import EXIT_USAGE, ImagelintError
from imagelint.matrix.versions import GoSemver, VersionSyntaxError, dsl_compare

Result = Literal["pass", "fail", "error"]

ENV_DISABLE_REQUIRE = "NVIDIA_DISABLE_REQUIRE"
ENV_REQUIRE_PREFIX = "NVIDIA_REQUIRE_"
ENV_REQUIRE_JETPACK_PREFIX = "NVIDIA_REQUIRE_JETPACK"
ENV_REQUIRE_CUDA = "NVIDIA_REQUIRE_CUDA"
ENV_CUDA_VERSION = "CUDA_VERSION"

# libnvidia-container's texts, verbatim (the hook prefixes them with "requirement error: ").
MSG_INVALID_EXPRESSION = "invalid expression"
_CUDA_REQUIRE_GREATER = "cuda>="
_CUDA_HINT = ", please update your driver to a newer version, or use an earlier cuda container"
_EXPR_MAX = 128  # dsl.c formats a failed factor into char buf[EXPR_MAX]; overflow is an error

# dsl.c's operator table, in table order (the order matters for its prefix matching).
_C_OPERATORS = ("=", "!=", "<", "<=", ">", ">=")
_OPERATOR_CHARS = "<>=!"
# Go factory.parse tries these in this order with strings.HasPrefix.
_GO_OPERATORS = ("!=", "<=", ">=", "=", "<", ">")

RUNTIME_MODES_ENFORCING = frozenset({"legacy", "csv"})
RUNTIME_MODES_NOT_ENFORCING = frozenset({"cdi", "jit-cdi"})


class RequireEnvError(ImagelintError):
    """The image env cannot be turned into requirements (the toolkit's hook fails the same way)."""

    exit_code = EXIT_USAGE


@dataclass(frozen=True)
class Device:
    """One visible GPU: ``brand`` as libnvidia-container reports it, ``arch`` = compute capability."""

    brand: str | None
    arch: str | None


@dataclass(frozen=True)
class RequireOutcome:
    """What the runtime would do with the requirements.

    ``message`` is the runtime's own text (``unsatisfied condition: ...``, ``invalid expression``,
    ``invalid CUDA version ...``); ``requirement`` the requirement string that failed;
    ``device_index`` the position in ``devices`` of the GPU it failed on (None: evaluated without a
    device, or not device-specific); ``enforced`` False when the runtime mode does not check at all.
    """

    result: Result
    message: str | None = None
    requirement: str | None = None
    device_index: int | None = None
    enforced: bool = True

    @property
    def passed(self) -> bool:
        return self.result == "pass"


# --- where requirements come from (nvidia-container-toolkit internal/config/image/cuda_image.go) ---

def go_parse_bool(text: str) -> bool | None:
    """Go's ``strconv.ParseBool``: None when Go would return an error."""
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


def requirements_disabled(env: Mapping[str, str]) -> bool:
    """True when ``NVIDIA_DISABLE_REQUIRE`` parses as a Go true (``yes`` does not)."""
    value = env.get(ENV_DISABLE_REQUIRE)
    return value is not None and go_parse_bool(value) is True


def is_legacy_image(env: Mapping[str, str]) -> bool:
    """``CUDA_VERSION`` non-empty and ``NVIDIA_REQUIRE_CUDA`` empty or unset (toolkit ``IsLegacy``)."""
    return bool(env.get(ENV_CUDA_VERSION, "")) and not env.get(ENV_REQUIRE_CUDA, "")


def legacy_cuda_requirement(cuda_version: str) -> str:
    """``CUDA_VERSION`` -> ``cuda>=MAJOR.MINOR``; raises ``RequireEnvError`` like the toolkit.

    Parsed as Masterminds semver (optional ``v``, 1-3 components); major and minor must fit uint32.
    ``12.2.2.009`` (four components, as NGC images set it) is invalid.
    """
    try:
        parsed = GoSemver.parse(cuda_version)
    except VersionSyntaxError:
        raise RequireEnvError(f"invalid CUDA version {cuda_version!r}: invalid version string") from None
    if parsed.major > 2**32 - 1 or parsed.minor > 2**32 - 1:
        raise RequireEnvError(f"invalid CUDA version {cuda_version!r}: component out of range") from None
    return f"cuda>={parsed.major}.{parsed.minor}"


def requirements_from_env(env: Mapping[str, str]) -> list[str]:
    """Every requirement string the toolkit derives from an image env, in env order.

    Raises ``RequireEnvError`` when ``CUDA_VERSION`` is needed and cannot be parsed.
    """
    if requirements_disabled(env):
        return []
    found = [
        value
        for name, value in env.items()
        if name.startswith(ENV_REQUIRE_PREFIX) and not name.startswith(ENV_REQUIRE_JETPACK_PREFIX)
    ]
    if is_legacy_image(env):
        found.append(legacy_cuda_requirement(env[ENV_CUDA_VERSION]))
    return found


def runtime_enforces_requirements(runtime_mode: str) -> bool:
    """legacy/csv check NVIDIA_REQUIRE_*; cdi/jit-cdi never do. ``auto`` must be resolved first
    (``Matrix.toolkit_default_runtime_mode``), so it and unknown modes raise ``ValueError``."""
    mode = runtime_mode.strip().lower()
    if mode in RUNTIME_MODES_ENFORCING:
        return True
    if mode in RUNTIME_MODES_NOT_ENFORCING:
        return False
    raise ValueError(f"unknown runtime mode {runtime_mode!r} (expected legacy, csv, cdi or jit-cdi)")


# --- legacy: libnvidia-container dsl.c -----------------------------------------------------------

@dataclass(frozen=True)
class _CContext:
    """What a legacy (dsl.c) evaluation checks against: the driver, its CUDA version, one GPU (or none)."""

    driver: str | None
    cuda: str | None
    device: Device | None


def _ascii_lower(text: str) -> str:
    # strcasecmp in the C locale folds ASCII only.
    return text.translate(_ASCII_FOLD)


_ASCII_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _c_rule(name: str, ctx: _CContext, op: str, value: str) -> bool | None:
    """One known rule (configure.c's check_*); None = error; raises KeyError for unknown names."""
    key = _ascii_lower(name)
    if key == "cuda":
        return True if ctx.cuda is None else dsl_compare(ctx.cuda, op, value)
    if key == "driver":
        return True if ctx.driver is None else dsl_compare(ctx.driver, op, value)
    if key == "arch":
        if ctx.device is None or ctx.device.arch is None:
            return True
        return dsl_compare(ctx.device.arch, op, value)
    if key == "brand":
        if ctx.device is None or ctx.device.brand is None:
            return True
        if op == "=":
            return _ascii_lower(ctx.device.brand) == _ascii_lower(value)
        if op == "!=":
            return _ascii_lower(ctx.device.brand) != _ascii_lower(value)
        return None
    raise KeyError(name)


def _c_evaluate_factor(expr: str, ctx: _CContext) -> bool | None:
    """dsl.c ``evaluate_rule``: True/False, or None for "invalid expression"."""
    name_len = _strcspn(expr, _OPERATOR_CHARS)
    if name_len == 0:
        return None
    rest = expr[name_len:]
    op_len = _strspn(rest, _OPERATOR_CHARS)
    if op_len == 0:
        return None
    op_text = rest[:op_len]
    for candidate in _C_OPERATORS:
        # strncmp(ptr, candidate, n) == 0: equal over n chars, stopping at candidate's NUL.
        if _strncmp_equal(op_text, candidate, op_len):
            op = candidate
            break
    else:
        return None
    value = rest[op_len:]
    if value == "":
        return None
    name = expr[:name_len]
    try:
        outcome = _c_rule(name, ctx, op, value)
    except KeyError:
        return None
    if outcome is False:
        # snprintf(buf, EXPR_MAX, "%s %s %s", ...) >= EXPR_MAX makes a false factor an error.
        formatted = f"{name} {op} {value}".encode("utf-8", "surrogatepass")
        if len(formatted) >= _EXPR_MAX:
            return None
    return outcome


def _strncmp_equal(text: str, candidate: str, n: int) -> bool:
    for i in range(n):
        c = candidate[i] if i < len(candidate) else "\0"
        t = text[i] if i < len(text) else "\0"
        if c != t:
            return False
        if c == "\0":
            return True
    return True


def _strcspn(text: str, reject: str) -> int:
    for i, ch in enumerate(text):
        if ch in reject:
            return i
    return len(text)


def _strspn(text: str, accept: str) -> int:
    for i, ch in enumerate(text):
        if ch not in accept:
            return i
    return len(text)


def _c_failure_message(requirement: str) -> str:
    first = requirement.split(" ", 1)[0]
    if first.startswith(_CUDA_REQUIRE_GREATER):
        return f"unsatisfied condition: {first}{_CUDA_HINT}"
    return f"unsatisfied condition: {first}"


def _c_evaluate(requirement: str, ctx: _CContext) -> RequireOutcome:
    """dsl.c ``dsl_evaluate`` for one requirement string and one device context."""
    predicate = requirement.split("\0", 1)[0]  # C strings end at NUL
    ret: bool = True  # carried across OR terms exactly like the C variable
    for or_expr in predicate.split(" "):
        if or_expr == "":
            continue
        term_completed = True
        for and_expr in or_expr.split(","):
            if and_expr == "":
                continue
            outcome = _c_evaluate_factor(and_expr, ctx)
            if outcome is None:
                return RequireOutcome("error", MSG_INVALID_EXPRESSION, requirement)
            ret = outcome
            if not ret:
                term_completed = False
                break
        if term_completed:
            # Every factor held (or the term was only commas): ret keeps its previous value.
            break
    if not ret:
        return RequireOutcome("fail", _c_failure_message(predicate), requirement)
    return RequireOutcome("pass")


def evaluate_requirement(
    req: str, driver: str | None, cuda: str | None, devices: Sequence[Device]
) -> RequireOutcome:
    """One requirement string as libnvidia-container evaluates it (legacy mode).

    ``driver``: nvmlSystemGetDriverVersion (``535.104.05``); ``cuda``: the driver's CUDA version
    ``major.minor``; None for either means unknown, which libnvidia-container treats as satisfied.
    Every device must pass; with no devices the requirement is evaluated once without a device.
    """
    if not devices:
        return _c_evaluate(req, _CContext(driver, cuda, None))
    for index, device in enumerate(devices):
        outcome = _c_evaluate(req, _CContext(driver, cuda, device))
        if not outcome.passed:
            return _with_device(outcome, index)
    return RequireOutcome("pass")


def _with_device(outcome: RequireOutcome, index: int) -> RequireOutcome:
    return RequireOutcome(outcome.result, outcome.message, outcome.requirement, index, outcome.enforced)


def _evaluate_legacy(
    requirements: Sequence[str], driver: str | None, cuda: str | None, devices: Sequence[Device]
) -> RequireOutcome:
    # configure.c: per visible device, every requirement in order; the first error stops.
    contexts: list[tuple[int | None, _CContext]] = [(i, _CContext(driver, cuda, d)) for i, d in enumerate(devices)]
    contexts = contexts or [(None, _CContext(driver, cuda, None))]
    for index, ctx in contexts:
        for requirement in requirements:
            outcome = _c_evaluate(requirement, ctx)
            if not outcome.passed:
                return outcome if index is None else _with_device(outcome, index)
    return RequireOutcome("pass")


# --- csv: nvidia-container-toolkit internal/requirements (Go) -----------------------------------

# Go strings.TrimSpace trims unicode.IsSpace runes.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


class _GoInvalid(Exception):
    """constraints.New returned an error (the whole check fails before evaluation)."""


@dataclass(frozen=True)
class _GoFactor:
    """One ``name op value`` factor of a requirement as the toolkit's Go code parses it (csv mode)."""

    name: str
    op: str
    value: str


def _go_parse_factor(condition: str, known: frozenset[str]) -> _GoFactor | None:
    if condition.strip(_GO_SPACE) == "":
        return None
    end = min((condition.find(c) for c in _OPERATOR_CHARS if c in condition), default=-1)
    if end == -1:
        raise _GoInvalid(f"invalid constraint: {condition}")
    name = condition[:end]
    rest = condition[end:]
    if name not in known:
        return None
    op = next((o for o in _GO_OPERATORS if rest.startswith(o)), "")
    value = rest[len(op):]
    if name != "brand":  # version properties validate the value as semver; brand accepts anything
        try:
            GoSemver.parse(value)
        except VersionSyntaxError:
            raise _GoInvalid(f"invalid value {value} for {name}") from None
    return _GoFactor(name, op, value)


def _go_parse(requirements: Sequence[str]) -> list[tuple[str, list[list[_GoFactor]]]]:
    """constraints.New: every requirement is parsed before anything is evaluated."""
    known = frozenset({"cuda", "arch", "driver", "brand"})
    parsed: list[tuple[str, list[list[_GoFactor]]]] = []
    for requirement in requirements:
        if requirement.strip(_GO_SPACE) == "":
            continue
        terms: list[list[_GoFactor]] = []
        for term in requirement.split(" "):
            factors = [f for f in (_go_parse_factor(c, known) for c in term.split(",")) if f is not None]
            if factors:
                terms.append(factors)
        if terms:
            parsed.append((requirement, terms))
    return parsed


def _go_factor_holds(factor: _GoFactor, properties: Mapping[str, str]) -> bool:
    have = properties.get(factor.name, "")
    if factor.name == "brand":
        order = (have > factor.value) - (have < factor.value)  # plain, case-sensitive Go compare
    else:
        try:
            order = GoSemver.parse(have).compare(GoSemver.parse(factor.value))
        except VersionSyntaxError:
            return False  # an unset property ("") cannot be parsed: the factor fails
    return {
        "=": order == 0,
        "!=": order != 0,
        "<": order < 0,
        "<=": order <= 0,
        ">": order > 0,
        ">=": order >= 0,
    }.get(factor.op, False)  # no operator matched: eval returns "invalid operator"


def _evaluate_csv(requirements: Sequence[str], cuda: str | None, devices: Sequence[Device]) -> RequireOutcome:
    if not requirements:
        return RequireOutcome("pass")
    try:
        parsed = _go_parse(requirements)
    except _GoInvalid as exc:
        return RequireOutcome("error", f"requirements not met: {exc}", None)
    properties = {"cuda": cuda or "", "driver": "", "brand": ""}
    # csv.go fills arch from CUDA device 0 only.
    properties["arch"] = (devices[0].arch or "") if devices else ""
    for requirement, terms in parsed:
        if not any(all(_go_factor_holds(f, properties) for f in term) for term in terms):
            text = " || ".join(" && ".join(f"{f.name}{f.op}{f.value}" for f in term) for term in terms)
            return RequireOutcome("fail", f"requirements not met: {text}", requirement)
    return RequireOutcome("pass")


# --- both --------------------------------------------------------------------------------------

def evaluate_env(
    env: Mapping[str, str],
    driver: str | None,
    cuda: str | None,
    devices: Sequence[Device],
    mode: str = "legacy",
) -> RequireOutcome:
    """The whole check the runtime performs for an image env in the given runtime mode.

    ``mode``: ``legacy`` (libnvidia-container), ``csv`` (Go, Tegra), ``cdi``/``jit-cdi`` (no check:
    the outcome is ``pass`` with ``enforced=False``). Never raises for bad env content.
    """
    if not runtime_enforces_requirements(mode):
        return RequireOutcome("pass", f"NVIDIA_REQUIRE_* is not checked in {mode} mode", None, None, False)
    try:
        requirements = requirements_from_env(env)
    except RequireEnvError as exc:
        return RequireOutcome("error", exc.message, env.get(ENV_CUDA_VERSION))
    if mode.strip().lower() == "csv":
        return _evaluate_csv(requirements, cuda, devices)
    return _evaluate_legacy(requirements, driver, cuda, devices)


__all__ = [
    "Device",
    "MSG_INVALID_EXPRESSION",
    "RequireEnvError",
    "RequireOutcome",
    "evaluate_env",
    "evaluate_requirement",
    "go_parse_bool",
    "is_legacy_image",
    "legacy_cuda_requirement",
    "requirements_disabled",
    "requirements_from_env",
    "runtime_enforces_requirements",
]
