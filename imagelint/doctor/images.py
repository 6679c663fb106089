"""The image side (``--images``): the config of the images GPU-node pods run, and ``check``'s verdict.

For the isolation checks doctor needs an image's own env (``NVIDIA_VISIBLE_DEVICES=all`` in
every official CUDA image); for stage 5, whether the image fits the node it was placed on.
Both come from ``check``'s core: each distinct image is inspected config-only (manifest and
config, no layer) through the same facts cache, at most ``WORKERS`` at a time and at most
``MAX_IMAGES`` per run, then ``run_check`` runs the config-level rules against the pools of the
nodes its pods run on. An image that cannot be read is a warning, not the end of the run.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from imagelint.cluster.objects import items, text
from imagelint.doctor.model import ImageSide, ImageVerdict
from imagelint.errors import ImagelintError
from imagelint.lazyre import lazy_pattern

if TYPE_CHECKING:
    from imagelint.doctor.context import Context
    from imagelint.facts.model import ImageFacts
    from imagelint.matrix.model import Matrix
    from imagelint.sources import SourceOptions

MAX_IMAGES = 32
WORKERS = 4


def reference_for(image: str) -> str:
    """A pod's image names a registry image (Kubernetes pulls, never reads a daemon or a file)."""
    return image if image.startswith("registry:") else f"registry:{image}"


def image_side_reader(source_options: SourceOptions, matrix: Matrix | None) -> Callable[[Context], ImageSide]:
    def read(ctx: Context) -> ImageSide:
        return read_image_side(ctx, source_options, matrix)

    return read


_DIGEST = lazy_pattern(r"@(sha256:[0-9a-f]{64})$")


def pulled_reference(image: str, image_id: str) -> str:
    """What the node runs: the spec's repository at the digest the kubelet reports
    (``status.containerStatuses[].imageID``), else the spec's image. A tag that moved since
    the pull must not make doctor judge another image."""
    digest = _DIGEST.search(image_id or "")
    if not digest:
        return image
    repository = image.split("@", 1)[0]
    last = repository.rsplit("/", 1)
    if ":" in last[-1]:
        repository = repository[: len(repository) - len(last[-1])] + last[-1].split(":", 1)[0]
    return f"{repository}@{digest.group(1)}"


def _images_on_gpu_nodes(ctx: Context) -> dict[str, tuple[str, set[str]]]:
    """image (as the spec names it) → (the reference to read, the GPU nodes pods in scope run it on)."""
    gpu_nodes = {n.name for n in ctx.gpu_nodes}
    found: dict[str, tuple[str, set[str]]] = {}
    for w in ctx.workloads:
        if w.pod.node not in gpu_nodes or ctx.is_component_pod(w.pod) or ctx.is_node_agent(w.pod) and not w.requests_gpu:
            continue
        for container in items(w.pod.spec, "containers"):
            image = text(container, "image", limit=1024)
            if not image:
                continue
            status = w.pod.container(text(container, "name", limit=253))
            reference = pulled_reference(image, status.image_id if status else "")
            found.setdefault(image, (reference, set()))[1].add(w.pod.node)
    return dict(sorted(found.items())[:MAX_IMAGES])


def read_image_side(ctx: Context, source_options: SourceOptions, matrix: Matrix | None) -> ImageSide:
    from imagelint.core.check import run_check
    from imagelint.core.config import Config
    from imagelint.core.inspect import inspect_reference

    side = ImageSide()
    wanted = _images_on_gpu_nodes(ctx)

    def inspect(image: str) -> tuple[str, Any]:
        try:
            return image, inspect_reference(reference_for(wanted[image][0]), source_options, read_layers=False)
        except ImagelintError as exc:
            return image, exc.message

    with ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="doctor-image") as pool:
        inspected = dict(pool.map(inspect, wanted))
    for image, facts in inspected.items():
        if isinstance(facts, str):
            side.unread[image] = facts
            ctx.snap.warnings.append(f"image {image}: not read ({facts})")
            continue
        if facts:
            side.envs[image] = {e.name: e.value for e in facts[0].env}

        def already_read(ref: str, opts: SourceOptions, read_layers: bool, _f: list[ImageFacts] = facts) -> list[ImageFacts]:
            """The facts read above: each node's check reuses them."""
            return list(_f)

        for node_name in sorted(wanted[image][1]):
            target = ctx.node_target(node_name, matrix)
            if target is None:
                continue
            run = run_check([image], source_options, target, matrix, Config(), read_layers=False, inspector=already_read)
            errors = [
                ImageVerdict(f.rule, f.severity, f.message, f.pool)
                for result in run.results for f in result.findings if f.severity == "error"
            ]
            if errors:
                side.verdicts[(image, node_name)] = errors
    return side


__all__ = ["MAX_IMAGES", "WORKERS", "ImageSide", "ImageVerdict", "image_side_reader", "pulled_reference", "read_image_side", "reference_for"]
