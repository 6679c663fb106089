"""The layer reader's worker threads: largest layers first on the threads asked for, nothing new
started once a layer has failed, and every thread joined on the way out."""

from __future__ import annotations

import threading
import time

import pytest

from imagelint.errors import ImageFormatError
from imagelint.layers.reader import extract_layer, read_image_filesystem
from tests.layers.helpers import image_of, make_layer
from tests.support.imagebuilder import File
from tests.layers.test_reader import CUDA_SPEC


def _layer_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("imagelint-layer")}


def _sized_layers(sizes: list[int]):
    """Layers whose blobs grow with ``sizes`` (incompressible bytes: the blob size follows)."""
    import os

    return [make_layer(i, [File(f"f{i}", os.urandom(size))]) for i, size in enumerate(sizes)]


def test_layers_start_largest_first_on_the_threads_asked_for_and_merge_in_layer_order() -> None:
    layers = _sized_layers([1_000, 50_000, 5_000, 200_000, 20_000])
    started: list[int] = []
    names: set[str] = set()
    lock = threading.Lock()

    def extract(layer, spec, limits):  # type: ignore[no-untyped-def]
        with lock:
            started.append(layer.index)
            names.add(threading.current_thread().name)
        time.sleep(0.02)
        return extract_layer(layer, spec, limits)

    fs = read_image_filesystem(image_of(layers), CUDA_SPEC, workers=2, extract=extract)
    assert sorted(started[:2]) == [1, 3], "the two largest layers go first"
    assert sorted(started) == [0, 1, 2, 3, 4]
    assert len(names) == 2 and all(n.startswith("imagelint-layer") for n in names)
    assert [e.path for e in fs.entries()] == []  # nothing in the spec matched; the merge still ran
    assert not _layer_threads()


def test_a_failed_layer_stops_the_queued_layers_above_it_from_starting() -> None:
    # Layer 2 (the largest) fails at once; layers 3 and 4 wait in the queue behind layer 0 and 1.
    layers = _sized_layers([30_000, 20_000, 100_000, 2_000, 1_000])
    started: list[int] = []
    release = threading.Event()

    def extract(layer, spec, limits):  # type: ignore[no-untyped-def]
        started.append(layer.index)
        if layer.index == 2:
            raise ImageFormatError("layer 2 is broken")
        release.wait(0.3)  # the first failure is seen while this one still runs
        return extract_layer(layer, spec, limits)

    with pytest.raises(ImageFormatError, match="layer 2 is broken"):
        read_image_filesystem(image_of(layers), CUDA_SPEC, workers=2, extract=extract)
    assert 3 not in started and 4 not in started, started
    assert not _layer_threads()


def test_every_thread_is_joined_on_the_way_out_even_after_an_interrupt() -> None:
    layers = _sized_layers([4_000, 3_000, 2_000, 1_000])

    def extract(layer, spec, limits):  # type: ignore[no-untyped-def]
        if layer.index == 0:
            raise KeyboardInterrupt  # handed to the waiting thread, as a Future hands any exception
        time.sleep(0.05)
        return extract_layer(layer, spec, limits)

    with pytest.raises(KeyboardInterrupt):
        read_image_filesystem(image_of(layers), CUDA_SPEC, workers=3, extract=extract)
    assert not _layer_threads()
