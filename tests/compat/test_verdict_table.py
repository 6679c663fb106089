"""The compatibility model, pinned cell by cell against NVIDIA's documented rules.

``expected()`` is written from the documents, not from imagelint's code:

* CUDA Toolkit release notes, Table 3: the floor of each release (11.8.0: 520.61.05,
  12.4.1: 550.54.15, 13.0.0: 580.65.06);
* CUDA Compatibility guide, minor-version compatibility (Table 2): 11.x from 450.80.02,
  12.x from 525.60.13, 13.x from 580 — within the driver's own CUDA major or older;
* CUDA Compatibility guide, forward compatibility: only data-centre GPUs; the compat
  libcuda is loaded when something puts it on the loader path; once loaded it fails on
  other GPUs (804), and on host branches its package does not support (803);
* container-toolkit release notes: legacy mode mounted compat libraries before 1.17.4,
  1.17.4 stopped, the enable-cuda-compat hook does it in every mode from 1.17.5 (when the
  compat driver's branch is newer than the host's; from 1.19.0 only for branches the ELF
  note lists), except legacy mode from 1.17.7, whose cuda-compat-mode=ldconfig default lets
  libnvidia-container decide by major. jit-cdi exists from 1.18.0.

Every cell runs the real rules on synthesized facts: IL101 and IL107 must report the
expected outcome (``extra["outcome"]``), with IL101's severity following it, and no two
findings about the pool may state different outcomes.
"""

from __future__ import annotations

import itertools

import pytest

from imagelint.facts.model import DriverLibrary, ForwardCompatNote

from tests.rules.helpers import facts, file_prov, of, pool, run, target

# --- NVIDIA's numbers, typed in from the documents ---------------------------------------------

FLOOR = {"11.8.0": "520.61.05", "12.4.1": "550.54.15", "13.0.0": "580.65.06"}
MINOR_FLOOR = {11: (450, 80, 2), 12: (525, 60, 13), 13: (580, 0, 0)}
BRANCH_CUDA_MAJOR = {450: 11, 470: 11, 525: 12, 535: 12, 550: 12, 570: 12, 580: 13, 590: 13}
DRIVERS = ("450.80.02", "470.57.02", "525.60.13", "535.104.05", "550.54.15", "570.124.06", "580.65.06", "590.44.01")
# The compat libcuda of each image: driver version, its ELF note's host branches (None: no note).
COMPAT = {
    "11.8.0": ("520.61.05", None),
    "12.4.1": ("550.54.15", (470, 525, 535)),
    "13.0.0": ("580.65.06", (535, 550, 570, 575)),
}
# Host branches NVIDIA's forward-compatibility table marks incompatible (X) for the package.
INCOMPATIBLE = {"12.4.1": {570, 580, 590}, "13.0.0": {590}, "11.8.0": set()}
GPUS = {"datacenter": "T4", "geforce": "RTX 3090"}
TOOLKITS = ("1.17.3", "1.18.0", "1.19.0")  # before / after the compat hook (1.17.5); jit-cdi from 1.18.0; ELF note 1.19.0
MODES = ("legacy", "cdi", "jit-cdi")


def v(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def expected(cuda: str, driver: str, gpu: str, compat: str, mode: str, toolkit: str) -> tuple[str, str | None]:
    """(outcome, failure) as NVIDIA documents it."""
    branch = int(driver.split(".")[0])
    compat_version, note = COMPAT[cuda]
    loaded = compat == "on-path"
    if compat == "present":
        runtime_loads = (mode == "legacy" and v(toolkit) < v("1.17.4")) or v(toolkit) >= v("1.17.5")
        legacy_ldconfig = mode == "legacy" and v(toolkit) >= v("1.17.7")  # libnvidia-container decides by major
        if v(toolkit) >= v("1.19.0") and note and not legacy_ldconfig:
            newer = branch in note and v(compat_version) > v(driver)
        else:
            newer = int(compat_version.split(".")[0]) > branch
        loaded = runtime_loads and newer
    if loaded:
        same_branch = int(compat_version.split(".")[0]) == branch
        if same_branch and v(compat_version) <= v(driver):
            loaded = False  # the host's own branch: the host driver runs it
        elif gpu == "geforce":
            return "fails", "compat-not-supported-on-device"
        elif v(compat_version) <= v(driver) or branch in INCOMPATIBLE[cuda] or (note and branch not in note):
            return "fails", "system-driver-mismatch"
        else:
            return "forward-compat", None
    if v(driver) >= v(FLOOR[cuda]):
        return "native", None
    major = int(cuda.split(".")[0])
    if v(driver) >= MINOR_FLOOR[major] and BRANCH_CUDA_MAJOR[branch] >= major:
        return "minor-version-compat", None
    return "fails", "driver-insufficient"


# --- the cells -------------------------------------------------------------------------------

def _image(cuda: str, compat: str):
    env = {"CUDA_VERSION": cuda, "NVIDIA_REQUIRE_CUDA": "cuda>=11.0"}  # a requirement every driver here meets
    libs: tuple[DriverLibrary, ...] = ()
    if compat != "absent":
        version, note = COMPAT[cuda]
        mm = ".".join(cuda.split(".")[:2])
        path = f"usr/local/cuda-{mm}/compat/libcuda.so.{version}"
        libs = (DriverLibrary(
            f"libcuda.so.{version}", path, "compat", version, compat == "on-path", file_prov(path),
            ForwardCompatNote(mm, note, (1, 2), "{}") if note else None,
        ),)
    return facts(env, driver_libraries=libs)


def _cells():
    for cuda, driver, gpu, compat, mode, toolkit in itertools.product(
        FLOOR, DRIVERS, GPUS, ("absent", "present", "on-path"), MODES, TOOLKITS
    ):
        if mode == "jit-cdi" and v(toolkit) < v("1.18.0"):
            continue  # jit-cdi mode does not exist before 1.18.0
        yield cuda, driver, gpu, compat, mode, toolkit


SEVERITY = {"native": None, "forward-compat": "info", "minor-version-compat": "warning", "fails": "error"}


@pytest.mark.parametrize("cuda", list(FLOOR))
def test_every_cell_gets_the_documented_verdict_and_no_rule_disagrees(cuda: str) -> None:
    wrong = []
    cells = [c for c in _cells() if c[0] == cuda]
    images = {compat: _image(cuda, compat) for compat in ("absent", "present", "on-path")}
    for _, driver, gpu, compat, mode, toolkit in cells:
        want, failure = expected(cuda, driver, gpu, compat, mode, toolkit)
        p = pool(driver=driver, gpus=(GPUS[gpu],), runtime_mode=mode, toolkit=toolkit)
        result = run(images[compat], target(p), select="IL1")
        il101 = of(result, "IL101")
        cell = (cuda, driver, gpu, compat, mode, toolkit)
        if want == "native":
            if il101:
                wrong.append((cell, want, il101[0].extra.get("outcome"), il101[0].text))
        elif len(il101) != 1 or il101[0].extra.get("outcome") != want or il101[0].severity != SEVERITY[want]:
            got = [(f.extra.get("outcome"), f.severity) for f in il101]
            wrong.append((cell, want, got, il101[0].text if il101 else ""))
            continue
        elif failure and il101[0].extra["cases"][0]["failure"] != failure:
            wrong.append((cell, failure, il101[0].extra["cases"][0]["failure"], il101[0].text))
        # No two findings about this pool state different outcomes.
        stated = {f.extra["outcome"] for f in result.findings if "outcome" in f.extra and f.pool == "p"}
        if stated - {want}:
            wrong.append((cell, want, sorted(stated), [f.text for f in result.findings if f.rule == "IL107"]))
    assert len(cells) > 200
    assert not wrong, f"{len(wrong)} of {len(cells)} cells wrong; first: {wrong[:3]}"


# --- the scenarios of issue 12's "Done means" ------------------------------------------------------

def _outcomes(result):
    return {f.rule: (f.extra.get("outcome"), f.severity) for f in result.findings if f.rule in ("IL101", "IL107")}


def test_ngc_style_compat_on_the_loader_path_on_geforce_fails_with_804_in_every_rule():
    image = _image("12.4.1", "on-path")
    result = run(image, target(pool(driver="535.104.05", gpus=("RTX 3090",))), select="IL1")
    # One cause, one finding: IL107 (the compat library's side of the same verdict) folds into IL101.
    assert _outcomes(result) == {"IL101": ("fails", "error")}
    [il101] = of(result, "IL101")
    assert il101.extra["also"] == ["IL107"] and "IL107" in il101.text
    assert "804" in il101.text and "GeForce" in il101.text
    assert "off the image's LD_LIBRARY_PATH" in il101.remediation
    assert "without it the image would run through minor-version compatibility" in il101.text


def test_compat_present_on_geforce_depends_on_the_runtime_and_says_so():
    image = _image("12.4.1", "present")
    result = run(image, target(pool(driver="535.104.05", gpus=("RTX 3090",))), select="IL1")
    [il101] = of(result, "IL101")
    assert il101.severity == "warning" and il101.extra["outcome"] == "depends"
    by_condition = {c["condition"]: (c["outcome"], c["failure"]) for c in il101.extra["cases"]}
    assert by_condition["in legacy mode with toolkit >= 1.17.4, < 1.17.5; in cdi mode with toolkit >= 1.12.0, < 1.17.5"] == (
        "minor-version-compat", None)
    assert ("fails", "compat-not-supported-on-device") in by_condition.values()
    assert "(--toolkit and --runtime-mode decide)" in il101.message  # which flags settle it, in plain words
    assert "libnvidia-container" in il101.text and "enable-cuda-compat hook" in il101.text


@pytest.mark.parametrize(("mode", "toolkit", "outcome", "by"), [
    ("legacy", "1.17.3", "forward-compat", "libnvidia-container"),
    ("legacy", "1.17.4", "minor-version-compat", None),
    ("legacy", "1.17.5", "forward-compat", "enable-cuda-compat hook"),
    ("cdi", "1.17.3", "minor-version-compat", None),
    ("cdi", "1.17.5", "forward-compat", "enable-cuda-compat hook"),
    ("jit-cdi", "1.18.0", "forward-compat", "enable-cuda-compat hook"),
])
def test_t4_pool_before_and_after_the_compat_hook(mode: str, toolkit: str, outcome: str, by: str | None) -> None:
    image = _image("12.4.1", "present")
    result = run(image, target(pool(driver="535.104.05", gpus=("T4",), runtime_mode=mode, toolkit=toolkit)), select="IL1")
    [il101] = of(result, "IL101")
    assert il101.extra["outcome"] == outcome
    if by:
        assert by in il101.text and il101.severity == "info"
    else:
        # The compat package is in the image but not loaded: say why and how to get it loaded.
        assert il101.severity == "warning" and "not loaded" in il101.text
        assert "toolkit >= 1.17.5" in il101.remediation and "550.54.15" in il101.remediation
        assert not of(result, "IL107") and il101.extra["also"] == ["IL107"]  # the same cause: one finding


def test_a_false_requirement_in_legacy_mode_is_il102s_and_il101_does_not_say_it_runs():
    image = facts({"CUDA_VERSION": "12.4.1", "NVIDIA_REQUIRE_CUDA": "cuda>=12.4"})
    result = run(image, target(pool(driver="535.104.05", gpus=("T4",), runtime_mode="legacy", toolkit="1.17.8")))
    assert not of(result, "IL101")
    assert [f.severity for f in of(result, "IL102")] == ["error"]
    cdi = run(image, target(pool(driver="535.104.05", gpus=("T4",), runtime_mode="cdi", toolkit="1.18.0")))
    [il101] = of(cdi, "IL101")
    assert il101.extra["outcome"] == "minor-version-compat"


def test_workstation_gpu_is_not_a_forward_compatibility_target():
    result = run(_image("12.4.1", "on-path"), target(pool(driver="535.104.05", gpus=("RTX A6000",))), select="IL1")
    [il101] = of(result, "IL101")
    assert il101.extra["outcome"] == "fails" and "workstation GPU" in il101.text and "804" in il101.text


def test_the_concrete_fixes_the_matrix_knows_are_in_the_finding():
    """Data-centre pool, CUDA 12.4 without compat libraries on R535: driver floor, the newest CUDA
    the driver runs natively, and the cuda-compat package for the image's CUDA."""
    result = run(_image("12.4.1", "absent"), target(pool(driver="535.104.05", gpus=("T4",), runtime_mode="cdi", toolkit="1.18.0")))
    [il101] = of(result, "IL101")
    assert il101.extra["outcome"] == "minor-version-compat"
    assert ">= 550.54.15" in il101.remediation
    assert "rebuild on CUDA 12.2.2" in il101.remediation
    assert "install cuda-compat-12-4" in il101.remediation
    geforce = run(_image("12.4.1", "absent"), target(pool(driver="535.104.05", gpus=("RTX 3090",), runtime_mode="cdi", toolkit="1.18.0")))
    assert "cuda-compat" not in of(geforce, "IL101")[0].remediation  # never offered where it cannot work
