"""``--matrix cluster[:NS/NAME]``: the matrix an organisation published as a ConfigMap (``imagelint matrix publish``)."""

from __future__ import annotations

from collections.abc import Sequence

from imagelint.cluster.configmaps import read_configmap
from imagelint.errors import ConfigError

DEFAULT_MATRIX_CONFIGMAP = "imagelint-matrix"


def parse_cluster_matrix_selector(selector: str) -> tuple[str | None, str]:
    """``cluster`` → (context namespace, imagelint-matrix); ``cluster:NS/NAME`` or ``cluster:NAME``."""
    _, _, rest = selector.partition(":")
    if not rest:
        return None, DEFAULT_MATRIX_CONFIGMAP
    namespace, sep, name = rest.rpartition("/")
    return (namespace or None) if sep else None, name or DEFAULT_MATRIX_CONFIGMAP


def matrix_from_cluster(
    context: str | None,
    kubeconfig: str | None,
    overlays: Sequence[str] = (),
    selector: str = "cluster",
    timeout: tuple[float, float] | None = None,
):  # -> imagelint.matrix.Matrix
    """The matrix published in the cluster (``imagelint matrix publish``), with local overlays on top."""
    from pathlib import Path

    from imagelint.matrix import apply_overlay, matrix_from_text

    namespace, name = parse_cluster_matrix_selector(selector)
    text = read_configmap(name, namespace, context, kubeconfig, timeout=timeout)
    matrix = matrix_from_text(text, f"cluster:{namespace + '/' if namespace else ''}{name}")
    for overlay in overlays:
        try:
            overlay_text = Path(overlay).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read matrix overlay: {exc.strerror or exc}", overlay) from None
        matrix = apply_overlay(matrix, overlay_text, overlay)
    return matrix


__all__ = ["DEFAULT_MATRIX_CONFIGMAP", "matrix_from_cluster", "parse_cluster_matrix_selector"]
