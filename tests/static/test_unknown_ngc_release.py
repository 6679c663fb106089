"""An NGC image the matrix does not know is said, not passed in silence: lint cannot read its CUDA."""

from __future__ import annotations

import pytest

from tests.static.test_real_shapes import lint


def _notices(run) -> list[str]:
    return [n for n in run.notices if "NGC release the matrix" in n]


@pytest.mark.parametrize("base", ["nvcr.io/nvidia/pytorch:19.01-py3", "nvcr.io/nvidia/pytorch:99.12-py3",
                                  "ghcr.io/nvidia/deepstream:99.01-triton-multiarch"])
def test_an_ngc_release_the_matrix_does_not_know_is_a_notice(tmp_path, base):
    run = lint(tmp_path, {"Dockerfile": f"FROM {base}\nRUN python train.py\n"})
    [notice] = _notices(run)
    assert base in notice and "Dockerfile:1" in notice


@pytest.mark.parametrize("base", ["nvcr.io/nvidia/pytorch:24.05-py3", "nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
                                  "python:3.12-slim"])
def test_known_releases_and_other_images_say_nothing_of_it(tmp_path, base):
    run = lint(tmp_path, {"Dockerfile": f"FROM {base}\n"})
    assert _notices(run) == []
