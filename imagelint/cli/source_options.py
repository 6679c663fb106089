"""The shared source flags (how to reach an image), defined once for ``inspect`` and ``check``.

Two ways to use them, as with ``target_options``:

1. The decorator::

       @app.command()
       @with_source_options
       def check(ref: str, source_options: SourceOptions) -> None: ...

   appends ``--platform/--all-platforms/--ca-cert/--insecure-registry/--docker-config/
   --timeout/--cache-dir/--no-cache`` to the command and passes one frozen
   ``SourceOptions`` in ``source_options``. Bad values exit 2 in one line.

2. The ``Annotated`` aliases below, then ``source_options_from(platform=..., ...)``.

``with_deferred_source_options`` adds the same flags and checks them at once, but hands
the command a function that builds the ``SourceOptions`` when called: ``lint`` reaches an
image only for ``--image``, and the pre-commit path should not import ``imagelint.sources``.
"""

from __future__ import annotations

import functools
import inspect
import os
from typing import TYPE_CHECKING, Annotated, Any, Callable, List, Optional, TypeVar

import typer

from imagelint.errors import ImagelintError, UsageError
from imagelint.image import Platform
from imagelint.sizes import (
    parse_size,  # the flags' size grammar (also used here by --max-*-size)
)

if TYPE_CHECKING:
    from imagelint.sources import SourceOptions

# What ``with_deferred_source_options`` passes: call it to build the options.
DeferredSourceOptions = Callable[[], "SourceOptions"]


PlatformOpt = Annotated[
    Optional[str],
    typer.Option("--platform", help="Platform to select from a multi-platform image, e.g. linux/arm64 (default linux/amd64)."),
]
AllPlatformsOpt = Annotated[
    bool, typer.Option("--all-platforms", help="Every platform of a multi-platform image.")
]
CaCertOpt = Annotated[
    Optional[str], typer.Option("--ca-cert", help="PEM CA bundle that replaces the system trust for registries.")
]
InsecureRegistryOpt = Annotated[
    Optional[List[str]],
    typer.Option("--insecure-registry", help="HOST[:PORT] that may use plain HTTP or unverified TLS (repeatable)."),
]
DockerConfigOpt = Annotated[
    Optional[str], typer.Option("--docker-config", help="Directory holding config.json for registry credentials (default $DOCKER_CONFIG or ~/.docker).")
]
TimeoutOpt = Annotated[
    float, typer.Option("--timeout", help="Seconds per registry, daemon or cluster request (connect, and each read).")
]
DeadlineOpt = Annotated[
    Optional[str],
    typer.Option("--deadline", help="Seconds the whole run may take, whatever a registry, daemon or cluster does (default 900 or $IMAGELINT_DEADLINE; 0 = none)."),
]
RetriesOpt = Annotated[
    int, typer.Option("--retries", help="Retries per request after a 429, 5xx or dropped connection (a Retry-After longer than --timeout or the time left is not waited for).")
]

CacheDirOpt = Annotated[
    Optional[str],
    typer.Option("--cache-dir", help="Cache directory for layer extracts and image facts (default $IMAGELINT_CACHE_DIR, else ~/.cache/imagelint)."),
]
NoCacheOpt = Annotated[
    bool, typer.Option("--no-cache", help="Read every layer again; neither use nor fill the cache of layer extracts and image facts.")
]

MaxImageSizeOpt = Annotated[
    Optional[str],
    typer.Option("--max-image-size", help="Stop reading an image after inflating this much, e.g. 300G (default 256G)."),
]
MaxLayerSizeOpt = Annotated[
    Optional[str],
    typer.Option("--max-layer-size", help="Stop reading a layer after inflating this much, e.g. 80G (default 64G)."),
]

_FLAG_PARAMS = {
    "platform": PlatformOpt,
    "all_platforms": AllPlatformsOpt,
    "ca_cert": CaCertOpt,
    "insecure_registry": InsecureRegistryOpt,
    "docker_config": DockerConfigOpt,
    "timeout": TimeoutOpt,
    "deadline": DeadlineOpt,
    "retries": RetriesOpt,
    "cache_dir": CacheDirOpt,
    "no_cache": NoCacheOpt,
    "max_image_size": MaxImageSizeOpt,
    "max_layer_size": MaxLayerSizeOpt,
}
_DEFAULTS: dict[str, Any] = {"platform": None, "all_platforms": False, "ca_cert": None, "insecure_registry": None,
                             "docker_config": None, "timeout": 30.0, "deadline": None, "retries": 4,
                             "cache_dir": None, "no_cache": False,
                             "max_image_size": None, "max_layer_size": None}


def source_options_from(
    platform: str | None = None,
    all_platforms: bool = False,
    ca_cert: str | None = None,
    insecure_registry: list[str] | None = None,
    docker_config: str | None = None,
    timeout: float = 30.0,
    deadline: str | None = None,
    retries: int = 4,
    cache_dir: str | None = None,
    no_cache: bool = False,
    max_image_size: str | None = None,
    max_layer_size: str | None = None,
) -> SourceOptions:
    """Flags → SourceOptions. Raises UsageError (exit 2) for values that cannot work."""
    from imagelint.sources import SourceOptions

    return SourceOptions(**_source_option_values(
        platform=platform, all_platforms=all_platforms, ca_cert=ca_cert, insecure_registry=insecure_registry,
        docker_config=docker_config, timeout=timeout, deadline=deadline, retries=retries, cache_dir=cache_dir,
        no_cache=no_cache, max_image_size=max_image_size, max_layer_size=max_layer_size))


def _source_option_values(
    platform: str | None,
    all_platforms: bool,
    ca_cert: str | None,
    insecure_registry: list[str] | None,
    docker_config: str | None,
    timeout: float,
    deadline: str | None,
    retries: int,
    cache_dir: str | None,
    no_cache: bool,
    max_image_size: str | None,
    max_layer_size: str | None,
) -> dict[str, Any]:
    """Checked flags → the keyword arguments of SourceOptions; UsageError for values that cannot work."""
    if platform and all_platforms:
        raise UsageError("--platform and --all-platforms exclude each other")
    if ca_cert is not None and not os.path.isfile(ca_cert):
        raise UsageError(f"--ca-cert {ca_cert}: no such file")
    if docker_config is not None and not os.path.isdir(docker_config):
        raise UsageError(f"--docker-config {docker_config}: no such directory")
    if not timeout > 0:
        raise UsageError("--timeout must be a positive number of seconds")
    if deadline is not None:
        from imagelint.deadline import parse_deadline

        parse_deadline(deadline)
    if retries < 0:
        raise UsageError("--retries must be 0 or more")
    hosts = []
    for host in insecure_registry or ():
        host = host.strip()
        if not host or "/" in host:
            raise UsageError(f"--insecure-registry {host!r}: expected HOST or HOST:PORT")
        hosts.append(host)
    if cache_dir is not None and not cache_dir.strip():
        raise UsageError("--cache-dir must name a directory")
    if cache_dir is not None and os.path.exists(cache_dir) and not os.path.isdir(cache_dir):
        raise UsageError(f"--cache-dir {cache_dir}: not a directory")
    kwargs: dict[str, Any] = {}
    if max_image_size is not None or max_layer_size is not None:
        from dataclasses import replace

        from imagelint.layers.limits import DEFAULT_LIMITS

        limits = DEFAULT_LIMITS
        if max_image_size is not None:
            limits = replace(limits, max_image_inflated_bytes=parse_size("--max-image-size", max_image_size))
        if max_layer_size is not None:
            limits = replace(limits, max_layer_inflated_bytes=parse_size("--max-layer-size", max_layer_size))
        kwargs["limits"] = limits
    if platform:
        kwargs["platform"] = Platform.parse(platform)
        kwargs["platform_explicit"] = True
    return dict(all_platforms=all_platforms, ca_cert=ca_cert, insecure_registries=tuple(hosts),
                docker_config=docker_config, timeout=float(timeout), retries=int(retries), cache_dir=cache_dir or None,
                no_cache=no_cache, **kwargs)


F = TypeVar("F", bound=Callable[..., Any])


def signature_without(func: Callable[..., Any], supplied: str) -> inspect.Signature:
    """``func``'s signature without the parameter a decorator supplies, every other annotation
    resolved (typer reads the objects, and ``from __future__ import annotations`` leaves strings).
    The supplied parameter's annotation is never evaluated, so a command may import its type
    under ``TYPE_CHECKING`` only."""
    sig = inspect.signature(func)
    namespace = getattr(inspect.unwrap(func), "__globals__", {})
    params = [p.replace(annotation=eval(p.annotation, namespace) if isinstance(p.annotation, str) else p.annotation)
              for p in sig.parameters.values() if p.name != supplied]
    return sig.replace(parameters=params)


def with_source_options(func: F) -> F:
    """Add the source flags to a command; it receives ``source_options: SourceOptions``."""
    return _with_source_flags(func, source_options_from)


def with_deferred_source_options(func: F) -> F:
    """As ``with_source_options``, but the command receives ``source_options: DeferredSourceOptions``:
    the flags are checked at once (bad values exit 2), the SourceOptions built only when called."""

    def deferred(**flags: Any) -> DeferredSourceOptions:
        _source_option_values(**flags)
        return functools.partial(source_options_from, **flags)

    return _with_source_flags(func, deferred)


def _with_source_flags(func: F, build: Callable[..., Any]) -> F:
    sig = signature_without(func, "source_options")
    params = list(sig.parameters.values())
    extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=ann, default=_DEFAULTS[name])
             for name, ann in _FLAG_PARAMS.items()]

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from imagelint import cachedir, deadline

        flags = {name: kwargs.pop(name, _DEFAULTS[name]) for name in _FLAG_PARAMS}
        try:
            options = build(**flags)
            # Every cache in the process (the parsed-matrix one too) follows --cache-dir / --no-cache,
            # and every reader (the cluster's too) --timeout and --deadline.
            cachedir.configure(flags["cache_dir"], flags["no_cache"])
            if flags["deadline"] is not None:
                deadline.start(deadline.parse_deadline(flags["deadline"]))
            deadline.set_request_timeout(float(flags["timeout"]))
        except ImagelintError as exc:
            from imagelint.cli.failure import fail

            raise fail(exc) from None
        try:
            return func(*args, source_options=options, **kwargs)
        finally:
            # The run is over: no watchdog, deadline, --timeout or cache choice outlives the command
            # (in-process callers, tests, run several commands in one interpreter).
            deadline.stop()
            cachedir.configure(None, False)

    signature = sig.replace(parameters=params + extra)
    wrapper.__signature__ = signature  # type: ignore[attr-defined]  # the attribute inspect.signature() reads
    # typer calls typing.get_type_hints(): the resolved objects, without the supplied parameter's.
    wrapper.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()
                               if p.annotation is not p.empty}
    return wrapper  # type: ignore[return-value]  # functools.wraps keeps func's call; the decorated type is F
