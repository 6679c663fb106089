"""The verdict in words a GPU platform engineer can act on (issues 12 and 15).

The first line of IL101 / IL107 says what happens (runs / fails how / depends on what), for
which CUDA on which driver and GPU (and pool, when it has a name of its own); each situation
the outcome depends on is a detail line of its own, beginning with that situation; limits,
notes and uncertain matrix rows are lines of their own. Checked on every cell of the verdict
table with the runtime left open (the cells where wording is hardest), and on the example
image through the real CLI.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

import pytest

from imagelint.rules.base import HEADLINE_LIMIT

from tests.compat.test_verdict_table import DRIVERS, FLOOR, GPUS, _image
from tests.rules.helpers import compat_lib, facts, of, pool, run, target

ROOT = Path(__file__).resolve().parents[2]
MODES = ("legacy", "cdi", "jit-cdi")
# The outcome, in the words a headline uses for it.
OUTCOME_WORDS = {
    "minor-version-compat": "minor-version compatibility",
    "forward-compat": "forward compatibility",
    "fails": "fails",
    "unknown": "could not judge",
    "depends": "decide",  # "(--toolkit and --runtime-mode decide)": which flag settles it
}


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _check_verdict_finding(f, cuda: str, driver: str, gpu: str) -> list[str]:
    problems = []
    head = f.message
    if len(head) > HEADLINE_LIMIT or "\n" in head:
        problems.append(f"headline not one short line ({len(head)} chars)")
    if f.rule == "IL101" and f"CUDA {cuda}" not in head:
        problems.append("headline does not name the CUDA version")
    if f"driver {driver}" not in head or gpu not in head:
        problems.append("headline does not name the pool's driver and GPU")
    outcome = f.extra["outcome"]
    if f.rule == "IL101" and OUTCOME_WORDS[outcome] not in head:
        problems.append(f"headline does not say the outcome ({outcome})")
    if not f.details:
        problems.append("no detail lines")
    for line in (head, *f.details):
        if not _balanced(line):
            problems.append(f"unbalanced parentheses: {line!r}")
    if outcome == "depends":
        situations = [c["situation"] for c in f.extra["cases"] if c["situation"]]
        first = f.details[0]
        if not first.startswith(tuple(MODES) + ("toolkit",)):
            problems.append(f"first detail does not start with a situation: {first!r}")
        shown = [s for s in situations if any(d.startswith(s + ":") for d in f.details)]
        if f.rule == "IL101" and len(shown) != len(situations):
            problems.append(f"not every situation has its own line: {situations}")
    return problems


@pytest.mark.parametrize("cuda", list(FLOOR))
def test_every_verdict_with_the_runtime_left_open_reads_as_headline_and_situations(cuda: str) -> None:
    wrong = []
    seen = set()
    for driver, gpu, compat in itertools.product(DRIVERS, GPUS, ("absent", "present", "on-path")):
        image = _image(cuda, compat)
        for mode in (None, *MODES):
            p = pool(driver=driver, gpus=(GPUS[gpu],), runtime_mode=mode)
            result = run(image, target(p), select="IL1")
            for f in of(result, "IL101") + of(result, "IL107"):
                seen.add((f.rule, f.extra["outcome"]))
                for problem in _check_verdict_finding(f, cuda, driver, GPUS[gpu]):
                    wrong.append(((cuda, driver, gpu, compat, mode), f.rule, problem, f.text))
    assert ("IL101", "depends") in seen  # the hard case was exercised
    assert not wrong, f"{len(wrong)} findings read badly; first: {wrong[:3]}"


def test_a_pool_with_a_name_of_its_own_is_named_in_the_headline() -> None:
    result = run(facts({"CUDA_VERSION": "12.4.1"}), target(pool("gpu-t4", driver="470.57.02", runtime_mode="cdi")))
    [f] = of(result, "IL101")
    assert f.message.startswith("CUDA 12.4.1 on pool gpu-t4 (driver 470.57.02, T4): fails: needs driver >= 550.54.15")
    assert "error 35" in f.message


def test_fails_everywhere_says_fails_and_how_not_depends() -> None:
    """Refused in legacy mode, error 35 elsewhere: one outcome (fails), said once."""
    result = run(facts({"CUDA_VERSION": "12.4.1"}), target(pool(driver="470.57.02")))
    [f] = of(result, "IL101")
    assert f.severity == "error" and f.extra["outcome"] == "fails"
    assert "depends" not in f.message and f.message.startswith("CUDA 12.4.1 on pool p (driver 470.57.02, T4): fails:")
    assert [d.split(":", 1)[0] for d in f.details[:2]] == ["legacy", "cdi; jit-cdi"]


def test_uncertain_rows_and_limits_are_lines_of_their_own() -> None:
    lib = compat_lib()
    image = facts({"CUDA_VERSION": "12.4.1", "NVIDIA_REQUIRE_CUDA": "cuda>=11.0"}, driver_libraries=(lib,))
    [f] = of(run(image, target(pool(driver="535.104.05"))), "IL101")
    uncertain = [d for d in f.details if d.startswith("rests on an uncertain matrix row: ")]
    assert uncertain and all(len(d) < 220 for d in uncertain)
    assert any(d.startswith("PTX newer than the driver's CUDA 12.2 cannot be JIT-compiled") for d in f.details)
    assert "APIs newer than the driver fail with cudaErrorCallRequiresNewerDriver" in f.details
    assert f.remediation.startswith("One of: (1) ") and "(2) " in f.remediation


def _text_report(*flags: str) -> list[str]:
    r = subprocess.run(
        [sys.executable, "-m", "imagelint", "check", "oci-dir:examples/cuda-app", "--color", "never", *flags],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    return r.stdout.splitlines()


def _finding_block(lines: list[str], rule: str) -> list[str]:
    start = next(i for i, ln in enumerate(lines) if ln.strip().startswith(rule + " "))
    block = [lines[start]]
    for ln in lines[start + 1:]:
        if not ln.startswith("      "):
            break
        block.append(ln)
    return block


def test_the_text_report_of_the_example_reads_as_headline_details_at_fix() -> None:
    lines = _text_report("--driver", "535.104.05", "--gpu", "T4")
    block = _finding_block(lines, "IL101")
    head, details = block[0], block[1:]
    assert re.match(r"^    IL101 cuda-driver-too-old \[pool driver-535\.104\.05\]: CUDA 12\.4\.1 on driver 535\.104\.05 "
                    r"\(T4\): forward compat, but only minor-version compat with some toolkit releases or modes "
                    r"\(--toolkit and --runtime-mode decide\)$", head), head
    # Each situation on its own line, beginning with it; then limits, the uncertain row, at, fix.
    assert details[0].strip().startswith(("legacy ", "cdi ", "jit-cdi")), details[0]
    assert details[1].strip().startswith(("legacy ", "cdi ", "jit-cdi")), details[1]
    assert "runs through forward compatibility" in " ".join(details[:2])
    assert any(d.strip().startswith("rests on an uncertain matrix row: ") for d in details)
    assert details[-2].strip().startswith("at /usr/local/cuda-12.4/compat/libcuda.so.550.54.15")
    assert details[-1].strip().startswith("fix One of: (1) upgrade the pool's driver to >= 550.54.15")
    assert all(_balanced(line) for line in block), [ln for ln in block if not _balanced(ln)]


def test_the_text_report_on_geforce_names_error_804_in_the_first_line() -> None:
    lines = _text_report("--driver", "535", "--gpu", "RTX-4090")
    head = _finding_block(lines, "IL101")[0]
    assert re.search(r"CUDA 12\.4\.1 on driver 535 \(RTX-4090\): .*\(--toolkit and --runtime-mode decide\)", head), head
    assert "fails with error 804" in head and "minor-version compat" in head
    # IL107 states the same verdict from the compat library's side: one finding, its words a detail line.
    block = _finding_block(lines, "IL101")
    assert any("(IL107 compat-libs-unusable): forward-compat libcuda 550.54.15 breaks CUDA 12.4.1 on driver 535 "
               "(RTX-4090): CUDA fails with error 804" in ln for ln in block), block
    assert block[1].strip().startswith("legacy <1.17.4 or >=1.17.5; cdi >=1.17.5; jit-cdi: fails with error 804")
    assert all(len(ln) < 400 or ln.startswith("      ") for ln in lines)

