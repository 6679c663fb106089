"""NGC releases whose notes name no driver defer to the forward-compatibility table (issue 37).

From 26.05 the NGC release notes' "Driver Requirements" say only "Release 26.05 is based on CUDA
13.2.1 which requires the NVIDIA Driver release. Please see CUDA Compatibility for more
information." (Triton Inference Server release notes rel-26-05 ... rel-26-10). That sentence
lists no data-centre driver: it sends the reader to NVIDIA's forward-compatibility page, whose
table lists the host branches each ``cuda-compat-X-Y`` package runs on (cuda-compat-13-2: R535,
R570, R580, R590; docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html). It does
not say that no data-centre driver works, so such a release on R535 is not a certain error 35:
on a data-centre GPU the NGC entrypoint enables the compat package, and the verdict says that the
branch list was read from the table rather than from the notes (uncertain). Forward
compatibility never runs on GeForce, whatever the table says: that failure stays certain.
"""

from __future__ import annotations

from tests.compat.test_forward_compat_images import il101

TRITON_2605 = "FROM nvcr.io/nvidia/tritonserver:26.05-py3\n"
DEFERRED = "refer to CUDA Compatibility"


def test_a_deferring_release_on_r535_runs_forward_on_a_data_centre_gpu_and_says_it_is_uncertain() -> None:
    [f] = il101(TRITON_2605, "535.104.05", "A100")
    assert (f.extra["outcome"], f.severity) == ("forward-compat", "info"), f.text
    assert any(DEFERRED in u for u in f.extra["uncertain"])
    assert "cuda-compat-13-2" in f.text


def test_a_branch_the_table_does_not_list_fails_but_the_finding_says_on_what_it_rests() -> None:
    [f] = il101(TRITON_2605, "550.54.15", "A100")  # cuda-compat-13-2 lists R535/R570/R580/R590
    assert f.extra["outcome"] == "fails"
    assert "not R550" in f.text
    assert any(DEFERRED in u for u in f.extra["uncertain"])


def test_geforce_fails_for_certain_whatever_the_table_says() -> None:
    [f] = il101(TRITON_2605, "535.104.05", "RTX 4090")
    assert (f.extra["outcome"], f.severity) == ("fails", "error")
    assert not any(DEFERRED in u for u in f.extra.get("uncertain") or ())


def test_an_unnamed_gpu_is_the_conditional_verdict() -> None:
    [f] = il101(TRITON_2605, "535.104.05", None)
    assert f.extra["outcome"] == "unknown" and f.severity == "warning"
    assert "data-centre" in f.text and "GeForce" in f.text


def test_a_driver_that_runs_the_release_natively_has_no_finding() -> None:
    assert il101(TRITON_2605, "595.58.03", "A100") == []


def test_the_matrix_marks_the_deferring_releases() -> None:
    from tests.rules.helpers import matrix

    ngc = matrix().ngc_image("nvcr.io/nvidia/tritonserver", "26.05-py3")
    assert ngc is not None and ngc.defers_to_forward_compat and ngc.datacenter_compat_drivers == ()
    listed = matrix().ngc_image("nvcr.io/nvidia/tritonserver", "26.04-py3")
    assert listed is not None and not listed.defers_to_forward_compat
