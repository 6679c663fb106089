"""The shared target flags (``--driver``, ``--gpu``, ``--target-file``, ``--cluster``...).

``check``, ``lint`` and ``target show`` all take the same flags. Two ways to use them:

1. The decorator (least code)::

       @app.command()
       @with_target_options
       def check(ref: str, target_options: TargetOptions) -> None:
           target = resolve_target(target_options, matrix)      # exits 2/3 on bad input

   The decorator appends the flags to the command's signature (typer reads it) and
   hands the command one frozen ``TargetOptions`` in the ``target_options`` argument.
   The flags go last in ``--help``.

2. The ``Annotated`` aliases below, declared by hand, then
   ``target_options_from(driver=..., gpu=..., ...)``.

``resolve_target`` turns the options into a Target and converts imagelint errors
into the one-line exit (``imagelint.cli.fail``).
"""

from __future__ import annotations

import functools
import inspect
from typing import TYPE_CHECKING, Annotated, Any, Callable, List, Optional, TypeVar

import typer

from imagelint.cli import completion
from imagelint.cli.source_options import signature_without
from imagelint.deploytarget import Target
from imagelint.deploytarget.options import TargetOptions, build_target
from imagelint.errors import ImagelintError

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

DriverOpt = Annotated[
    Optional[List[str]],
    typer.Option("--driver", help="NVIDIA driver version of a node pool, e.g. 535.104.05 (repeat for several pools; "
                 "each gets every --gpu)."),
]
GpuOpt = Annotated[
    Optional[List[str]],
    typer.Option("--gpu", help="GPU model in the pool, e.g. H100 or Tesla-T4 (repeatable; with several --driver, "
                 "every pool has every GPU: use --pool for T4 on one driver and H100 on another).",
                 autocompletion=completion.gpu_names),
]
PoolOpt = Annotated[
    Optional[List[str]],
    typer.Option("--pool", metavar="KEY=VALUE,...",
                 help="One node pool: driver=535.104.05,gpu=T4 (keys: name, driver, gpu, compute-capability, brand, arch, "
                 "toolkit, device-plugin, runtime-mode; repeat for more pools)."),
]
ComputeCapabilityOpt = Annotated[
    Optional[str],
    typer.Option("--compute-capability", help="GPU compute capability MAJOR.MINOR (overrides --gpu's)."),
]
BrandOpt = Annotated[
    Optional[str],
    typer.Option("--brand", help="GPU brand as libnvidia-container reports it (Tesla, Nvidia, GeForce...)."),
]
ArchOpt = Annotated[
    Optional[str], typer.Option("--arch", help="Node CPU architecture: amd64 or arm64.")
]
ToolkitOpt = Annotated[
    Optional[str], typer.Option("--toolkit", help="nvidia-container-toolkit version, e.g. 1.17.3.")
]
DevicePluginOpt = Annotated[
    Optional[str], typer.Option("--device-plugin", help="k8s-device-plugin version, e.g. 0.17.0.")
]
RuntimeModeOpt = Annotated[
    Optional[str],
    typer.Option("--runtime-mode", help="Container toolkit mode: legacy, cdi, jit-cdi, csv or auto."),
]
TargetFileOpt = Annotated[
    Optional[str], typer.Option("--target-file", help="Target file (TOML) with one table per node pool.")
]
ClusterOpt = Annotated[
    bool, typer.Option("--cluster", help="Read the target from the live cluster (kubeconfig or in-cluster).")
]
ContextOpt = Annotated[
    Optional[str], typer.Option("--context", help="kubeconfig context for --cluster.")
]
KubeconfigOpt = Annotated[
    Optional[str], typer.Option("--kubeconfig", help="kubeconfig file for --cluster.")
]

# parameter name (as the decorator adds it) -> (annotation, default)
_PARAMETERS: dict[str, tuple[Any, Any]] = {
    "target_driver": (DriverOpt, None),
    "target_gpu": (GpuOpt, None),
    "target_pool": (PoolOpt, None),
    "target_compute_capability": (ComputeCapabilityOpt, None),
    "target_brand": (BrandOpt, None),
    "target_arch": (ArchOpt, None),
    "target_toolkit": (ToolkitOpt, None),
    "target_device_plugin": (DevicePluginOpt, None),
    "target_runtime_mode": (RuntimeModeOpt, None),
    "target_file": (TargetFileOpt, None),
    "target_cluster": (ClusterOpt, False),
    "target_context": (ContextOpt, None),
    "target_kubeconfig": (KubeconfigOpt, None),
}


def target_options_from(
    driver: list[str] | None = None,
    gpu: list[str] | None = None,
    pool: list[str] | None = None,
    compute_capability: str | None = None,
    brand: str | None = None,
    arch: str | None = None,
    toolkit: str | None = None,
    device_plugin: str | None = None,
    runtime_mode: str | None = None,
    target_file: str | None = None,
    cluster: bool = False,
    context: str | None = None,
    kubeconfig: str | None = None,
) -> TargetOptions:
    return TargetOptions(
        drivers=tuple(driver or ()),
        gpus=tuple(gpu or ()),
        pools=tuple(pool or ()),
        compute_capability=compute_capability,
        brand=brand,
        arch=arch,
        toolkit=toolkit,
        device_plugin=device_plugin,
        runtime_mode=runtime_mode,
        target_file=target_file,
        cluster=bool(cluster),
        context=context,
        kubeconfig=kubeconfig,
    )


F = TypeVar("F", bound=Callable[..., Any])


def with_target_options(func: F) -> F:
    """Add the target flags to a command; it receives ``target_options: TargetOptions``."""
    if "target_options" not in inspect.signature(func).parameters:
        raise TypeError(f"{func.__name__} must take a 'target_options' parameter to use @with_target_options")
    original = signature_without(func, "target_options")
    kept = list(original.parameters.values())
    added = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)
        for name, (annotation, default) in _PARAMETERS.items()
    ]
    # typer passes everything as keywords, so keyword-only is safe; no *args/**kwargs.
    positional = [p for p in kept if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keyword = [p for p in kept if p.kind == p.KEYWORD_ONLY]
    signature = original.replace(parameters=positional + keyword + added)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name, default) for name, (_, default) in _PARAMETERS.items()}
        kwargs["target_options"] = target_options_from(
            driver=values["target_driver"],
            gpu=values["target_gpu"],
            pool=values["target_pool"],
            compute_capability=values["target_compute_capability"],
            brand=values["target_brand"],
            arch=values["target_arch"],
            toolkit=values["target_toolkit"],
            device_plugin=values["target_device_plugin"],
            runtime_mode=values["target_runtime_mode"],
            target_file=values["target_file"],
            cluster=values["target_cluster"],
            context=values["target_context"],
            kubeconfig=values["target_kubeconfig"],
        )
        return func(*args, **kwargs)

    wrapper.__signature__ = signature  # type: ignore[attr-defined]  # the attribute inspect.signature() reads
    # typer calls typing.get_type_hints(); give it resolved objects, not the wrapped function's strings.
    wrapper.__annotations__ = {p.name: p.annotation for p in signature.parameters.values() if p.annotation is not p.empty}
    if signature.return_annotation is not signature.empty:
        wrapper.__annotations__["return"] = signature.return_annotation
    return wrapper  # type: ignore[return-value]  # functools.wraps keeps func's call; the decorated type is F


def read_cluster_target(context: str | None, kubeconfig: str | None, matrix: Matrix | None) -> Target:
    """The live cluster as a Target (``--cluster``): the reader ``build_target`` is handed. The
    cluster package (and the ``kubernetes`` client it may import) loads only when it is asked for."""
    from imagelint.cluster.read_target import target_from_cluster

    return target_from_cluster(context, kubeconfig, matrix)


def resolve_target(options: TargetOptions, matrix: Matrix | None, *, cluster_matrix: bool = False) -> Target:
    """Build the merged Target, or exit with imagelint's one-line error (2 usage, 3 cluster)."""
    from imagelint.cli.failure import fail

    try:
        return build_target(options, matrix, read_cluster_target, cluster_matrix=cluster_matrix)
    except ImagelintError as exc:
        raise fail(exc) from None


__all__ = [
    "ArchOpt",
    "BrandOpt",
    "ClusterOpt",
    "ComputeCapabilityOpt",
    "ContextOpt",
    "DevicePluginOpt",
    "DriverOpt",
    "GpuOpt",
    "KubeconfigOpt",
    "PoolOpt",
    "RuntimeModeOpt",
    "TargetFileOpt",
    "ToolkitOpt",
    "TargetOptions",
    "resolve_target",
    "target_options_from",
    "with_target_options",
]
