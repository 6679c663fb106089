"""A selector that matches no node, and the nearest label the nodes really carry.

``nearest_label(key, value, nodes)``: when the key exists on some node, the closest value that
key has; otherwise the closest ``key=value`` pair over every label of every node (difflib's
ratio, cut-off 0.6) — "did you mean hardware-type=ai-training?". Pure, no cluster access.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

CUTOFF = 0.6


def label_pairs(node_labels: Iterable[Mapping[str, str]]) -> frozenset[tuple[str, str]]:
    pairs: set[tuple[str, str]] = set()
    for labels in node_labels:
        pairs.update(labels.items())
    return frozenset(pairs)


def nearest_label(key: str, value: str | None, node_labels: Iterable[Mapping[str, str]] | frozenset[tuple[str, str]]) -> str | None:
    """``node_labels``: each node's labels, or their ``label_pairs`` (computed once for many pods)."""
    pairs = node_labels if isinstance(node_labels, frozenset) else label_pairs(node_labels)
    if not pairs:
        return None
    values_of_key = sorted({v for k, v in pairs if k == key})
    if value is None:  # Exists on a key no node has: the nearest key
        keys = sorted({k for k, _ in pairs})
        close = difflib.get_close_matches(key, keys, n=1, cutoff=CUTOFF)
        return close[0] if close else None
    if values_of_key:
        close = difflib.get_close_matches(value, values_of_key, n=1, cutoff=CUTOFF)
        if close:
            return f"{key}={close[0]}"
    wanted = f"{key}={value}"
    close = difflib.get_close_matches(wanted, sorted(f"{k}={v}" for k, v in pairs), n=1, cutoff=CUTOFF)
    return close[0] if close else None


def nearest_name(name: str, names: Iterable[str]) -> str | None:
    close = difflib.get_close_matches(name, sorted(set(names)), n=1, cutoff=CUTOFF)
    return close[0] if close else None


__all__ = ["CUTOFF", "label_pairs", "nearest_label", "nearest_name"]
