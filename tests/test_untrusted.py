"""``imagelint.untrusted``: the one reader of untrusted JSON and numbers, and the rule that nothing
else in the package parses them (a grep over the source, with a short allow-list)."""

from __future__ import annotations

import ast
import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from imagelint.errors import EXIT_USAGE, ImagelintError
from imagelint.untrusted import (
    MAX_JSON_DEPTH, UntrustedInputError, int_or_none, is_digits, json_depth, loads_json, parse_float, parse_int,
)

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
PACKAGE = Path(__file__).resolve().parent.parent / "imagelint"


# --- the module -------------------------------------------------------------------------------


@pytest.mark.parametrize("doc", [b"[" * 60000 + b"]" * 60000, b'{"a":' * 5000 + b"1" + b"}" * 5000,
                                 b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1)])
def test_deep_documents_are_one_error_not_a_recursion(doc: bytes) -> None:
    with pytest.raises(UntrustedInputError, match="nested .* past the limit of 128"):
        loads_json(doc)


def test_depth_ignores_brackets_inside_strings_and_allows_the_limit() -> None:
    inside = json.dumps({"k": "[" * 10000 + "{" * 10000 + '\\"['})
    assert loads_json(inside)["k"].startswith("[[[")
    at_limit = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert json_depth(at_limit.encode()) == MAX_JSON_DEPTH
    loads_json(at_limit)


@pytest.mark.parametrize("doc", ["NaN", "[Infinity]", '{"a": -Infinity}', "1e400", "[-1e999]", "1" * 4301,
                                 b"\xff\xfe{}", '{"a": 1', ""])
def test_non_finite_huge_and_broken_documents_are_refused_in_one_line(doc: str | bytes) -> None:
    with pytest.raises(UntrustedInputError) as caught:
        loads_json(doc)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, ImagelintError)
    assert caught.value.exit_code == EXIT_USAGE and "\n" not in str(caught.value)


def test_size_cap_is_checked_before_parsing() -> None:
    with pytest.raises(UntrustedInputError, match="larger than 10 bytes"):
        loads_json(b"[" + b"1," * 10 + b"1]", max_bytes=10)


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                    | st.text(), lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(), kids, max_size=4),
                    max_leaves=30))
@FUZZ
def test_every_ordinary_document_reads_as_json_reads_it(value: object) -> None:
    text = json.dumps(value)
    assert loads_json(text) == json.loads(text)
    assert loads_json(text.encode()) == json.loads(text)


@given(st.text(alphabet="[]{}\"\\:,0123456789.eE-+ abtruefalsnNIfiy²٣", max_size=400), st.integers(0, 20000))
@FUZZ
def test_any_text_is_a_value_or_one_untrusted_error(text: str, nesting: int) -> None:
    for doc in (text, "[" * nesting + text + "]" * nesting):
        try:
            value = loads_json(doc)
        except UntrustedInputError as exc:
            assert "\n" not in str(exc)
        else:
            assert json.loads(json.dumps(value, allow_nan=False)) == value


@pytest.mark.parametrize("text", ["²", "٣", "¹²", "1²", "", " 1", "+1", "-1", "1_000", "9" * 19, "0x10", "１"])
def test_numbers_are_ascii_digits_of_a_bounded_length(text: str) -> None:
    assert not is_digits(text) and int_or_none(text) is None
    with pytest.raises(UntrustedInputError, match="expected a whole number"):
        parse_int(text, "--shard")


def test_parse_int_bounds_and_signs() -> None:
    assert parse_int("42", "x") == 42 and parse_int("-3", "x", signed=True) == -3
    assert int_or_none("9" * 18) == 10**18 - 1
    with pytest.raises(UntrustedInputError, match="from 1 up to 4"):
        parse_int("5", "x", minimum=1, maximum=4)


@pytest.mark.parametrize("text", ["1e400", "-1e400", "nan", "inf", "Infinity", "1" * 65, "²", "1,5", "0x1p3", ""])
def test_floats_are_finite_ascii_decimals(text: str) -> None:
    with pytest.raises(UntrustedInputError):
        parse_float(text, "--max-image-size")


@given(st.floats(allow_nan=False, allow_infinity=False))
@FUZZ
def test_parse_float_reads_what_repr_writes(value: float) -> None:
    assert parse_float(repr(value), "x") == value and math.isfinite(parse_float(repr(value), "x"))


# --- nothing else parses untrusted text ----------------------------------------------------------

# Every int()/float() outside imagelint/untrusted.py, by file: how many, and why each is safe.
# A new call in any file fails this test until it is routed through imagelint.untrusted or its
# file's entry here is changed with a reason.
SAFE_CONVERSIONS: dict[str, tuple[int, str]] = {
    "audit/shard.py": (3, "int(hex digest[:16], 16) of our own sha256; int() of index/count checked by is_digits(…, 9)"),
    "cli/source_options.py": (3, "float/int of values typer already converted (--timeout FLOAT, --retries INTEGER)"),
    "cli/progress.py": (1, "int(elapsed seconds) of our own clock"),
    "compat/evidence.py": (3, "parts checked by is_digits (ASCII, <= 18 digits) on the same line or the line before; the minor of a major_minor() result"),
    "compat/judge.py": (1, "parts filtered by is_digits"),
    "doctor/context.py": (1, "value checked by is_digits(…, 6)"),
    "doctor/scheduler_message.py": (1, "regex group ([0-9]{1,9}) of the scheduler's message"),
    "facts/archlist.py": (2, "regex groups \\d{1,2} / \\d{2,3} of arch list items (int() reads any Unicode decimal digit)"),
    "facts/codec.py": (1, "float() of a value that is already an int or float in our cache's JSON (loads_json: finite)"),
    "facts/cuda.py": (2, "regex groups \\d{1,3} of the libcudart soname"),
    "facts/driverlibs.py": (1, "int() of JSON numbers (loads_json: finite, bounded) or strings checked by is_digits"),
    "facts/fatbin.py": (2, "a target's digits checked by is_digits; unplaced count is our scanner's int"),
    "facts/gpuarch.py": (1, "regex group \\d{2,3} of an arch name (a few digits: int() reads any Unicode decimal digit)"),
    "facts/gpuindex.py": (1, "token checked by is_digits(…, 4)"),
    "layers/reader.py": (6, "int() of our scanners' own counters (ints already)"),
    "layers/tarwalk.py": (3, "octal header fields of 12 bytes or fewer (at most 12 digits); pax record length: ASCII digits found within 20 bytes"),
    "matrix/doctor_signatures.py": (1, "stage of the shipped signature table, typed integer by its loader"),
    "matrix/loader.py": (1, "regex group of the TOML parser's own 'at line N' message"),
    "matrix/answers/stack.py": (1, "max-length checked by is_digits"),
    "matrix/rowstore.py": (1, "values checked by is_digits or is_numeric_version (at most 20 ASCII digits a part), or matrix values matched by the schema's ^[0-9]+(\\.[0-9]+)*$ patterns, at most 4,096 characters (schema.MAX_PATTERNED_CHARS, inside int()'s 4,300-digit limit)"),
    "matrix/queries/cuda.py": (1, "values checked by is_digits or is_numeric_version (at most 20 ASCII digits a part), or matrix values matched by the schema's ^[0-9]+(\\.[0-9]+)*$ patterns, at most 4,096 characters (schema.MAX_PATTERNED_CHARS, inside int()'s 4,300-digit limit)"),
    "matrix/queries/images.py": (2, "values checked by is_digits or is_numeric_version (at most 20 ASCII digits a part), or matrix values matched by the schema's ^[0-9]+(\\.[0-9]+)*$ patterns, at most 4,096 characters (schema.MAX_PATTERNED_CHARS, inside int()'s 4,300-digit limit)"),
    "matrix/versions.py": (5, "strtoumax: at most 20 ASCII digits; GoSemver: at most 21 characters; parts checked by is_digits"),
    "redact.py": (1, "regex group of our own placeholder [0-9]{1,6}"),
    "reference.py": (1, "the port, matched by :[0-9]{1,5}$"),
    "report/github.py": (1, "int() of a Finding's line, an int already"),
    "report/sarif.py": (1, "int() of a Finding's line, an int already"),
    "kube/cel.py": (1, "parts found by [0-9]{1,18} in a CEL expression"),
    "rules/pools.py": (1, "head checked by is_digits"),
    "kube/scheduler.py": (4, "node-selector values compared as Gt/Lt (two on one line, and a described label's bound): inside try/except ValueError; int() of a quantity bounded by _QUANTITY_NUMBER (64 characters, exponent of 2 digits)"),
    "cluster/dump_formats.py": (4, "a dump's YAML int/float scalar, matched by the resolver's ASCII patterns: inside try/except ValueError (past int()'s digit limit the scalar stays text)"),
    "matrix/node_labels.py": (1, "regex group [0-9]{1,3}"),
    "matrix/refresh.py": (4, "a driver version matched by _DRIVER ([0-9]{3,4} before the dot); _CUDA_VARIANT's groups [0-9]{1,2}"),
    "report/junit.py": (1, "int() of a Finding's line, an int already"),
    "rules/_resources.py": (2, "regex groups [0-9]{1,3} and [0-9]{1,4} of a MIG resource name"),
    "rules/compose_gpu_pinned.py": (1, "ids checked by is_digits(…, 4)"),
    "rules/cuda_version_conflict.py": (1, "major.minor keys built from is_digits-checked versions"),
    "rules/hardcoded_visible_devices.py": (1, "items checked by is_digits(…, 4)"),
    "rules/mig_profile_not_on_gpu.py": (1, "regex group [0-9]{1,6} of a product's memory"),
    "rules/no_kernel_for_gpu.py": (1, "driver CUDA versions from the matrix (schema-checked numeric versions)"),
    "sizes.py": (4, "int(parse_float(…)) bounded by 1 EiB; human_size of our own ints"),
    "sources/daemon.py": (2, "int(--timeout), a checked float; parts found by [0-9]{1,9} in the daemon's API version"),
    "sources/daemon_save.py": (1, "int(--timeout), a checked float"),
    "sources/http.py": (2, "urllib3's own Retry-After parser; the tunnel status, matched by [0-9]{3}"),
    "static/dra.py": (1, "inside try/except (TypeError, ValueError, OverflowError): not a number is None"),
    "deploytarget/file.py": (1, "regex group of the TOML parser's own 'at line N' message"),
    "versions.py": (7, "parts of a value matched by the version pattern (a ValueError here is the constructor's own refusal of a bad version, which its callers catch); a compute capability's [0-9]{1,3} groups or is_digits(text, 2); version_key and major_minor parts checked by is_digits"),
    "cluster/operator.py": (2, "inside try/except ValueError: a label that is not a number is not a match"),
    "cluster/objects.py": (1, "obj checked by is_digits"),
    "core/config.py": (1, "regex group of the TOML parser's own 'at line N' message"),
}
_CALL = re.compile(r"(?<![\w.])(?:int|float)\(")
_JSON = re.compile(r"\bjson\.loads?\(")
_ISDIGIT = re.compile(r"\.isdigit\(\)")


def _code_lines(path: Path) -> list[str]:
    """The file's lines with comments and docstrings blanked (a docstring may say ``int('²')``)."""
    source = path.read_text()
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for n in range(node.lineno - 1, node.end_lineno or node.lineno):
                lines[n] = ""
    return [line.split(" #", 1)[0] if not line.lstrip().startswith("#") else "" for line in lines]


def _sources() -> list[tuple[str, list[str]]]:
    return [(str(p.relative_to(PACKAGE)), _code_lines(p)) for p in sorted(PACKAGE.rglob("*.py"))
            if p.name != "untrusted.py"]


def test_no_json_parsing_outside_the_untrusted_module() -> None:
    found = [f"{name}:{i + 1}: {line.strip()}" for name, lines in _sources() for i, line in enumerate(lines)
             if _JSON.search(line)]
    assert found == [], "parse JSON with imagelint.untrusted.loads_json:\n" + "\n".join(found)


def test_no_unicode_isdigit_outside_the_untrusted_module() -> None:
    # str.isdigit() is true for '²' and '٣': use untrusted.is_digits. Allowed: a bytes slice
    # (bytes.isdigit is ASCII only) and a test already guarded by isascii() on the same line.
    found = [f"{name}:{i + 1}: {line.strip()}" for name, lines in _sources() for i, line in enumerate(lines)
             if _ISDIGIT.search(line) and "isascii() and" not in line
             and not (name == "layers/tarwalk.py" and "data[pos:space].isdigit()" in line)
             and not (name == "static/words.py" and "self.peek().isdigit()" in line)]
    assert found == [], "use imagelint.untrusted.is_digits:\n" + "\n".join(found)


def test_every_int_and_float_call_outside_the_module_is_accounted_for() -> None:
    counts = {name: sum(len(_CALL.findall(line)) for line in lines) for name, lines in _sources()}
    unexpected = {name: n for name, n in counts.items() if n and name not in SAFE_CONVERSIONS}
    changed = {name: (counts.get(name, 0), SAFE_CONVERSIONS[name][0]) for name in SAFE_CONVERSIONS
               if counts.get(name, 0) != SAFE_CONVERSIONS[name][0]}
    assert unexpected == {} and changed == {}, (
        "int()/float() of untrusted text goes through imagelint.untrusted (parse_int, int_or_none, parse_float); "
        f"new calls: {unexpected}; counts that changed (found, allowed): {changed}")
