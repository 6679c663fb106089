"""``collect_image_facts``: one image (config + merged layers) in, ``ImageFacts`` out."""

from __future__ import annotations

from types import MappingProxyType

from imagelint.facts.archlist import image_arch_lists
from imagelint.facts.baseimage import base_image_facts
from imagelint.facts.cuda import cuda_facts
from imagelint.facts.driverlibs import driver_libraries
from imagelint.facts.fatbin import gpu_code_facts
from imagelint.facts.fsview import FilesystemView, effective_env
from imagelint.facts.loader import loader_facts
from imagelint.facts.model import ImageFacts
from imagelint.facts.scripts import gpu_facts
from imagelint.image import Image


def collect_image_facts(image: Image, fs: FilesystemView | None) -> ImageFacts:
    """Facts about ``image``. ``fs`` None means layers were not read: ``complete=False``."""
    config = image.config
    env = effective_env(config)
    labels = dict(config.labels)
    warnings: list[str] = list(getattr(fs, "warnings", ()) or ()) if fs is not None else []
    loader = loader_facts(env, fs, image.platform, warnings)
    libs = driver_libraries(fs, loader, warnings) if fs is not None else ()
    unread: list = []  # (note, provenance) of files a fact needed but could not read to the end
    cuda = cuda_facts(env, labels, fs, unread, warnings)
    warnings += [f"/{p.path}: {note}" for note, p in unread]  # the scripts walk writes its own
    gpu = gpu_facts(env, config.entrypoint, config.cmd, config.working_dir, fs, warnings, unread)
    return ImageFacts(
        subject=image.ref,
        kind="image",
        platform=image.platform,
        digest=image.digest or image.config_digest,
        env=env,
        entrypoint=config.entrypoint,
        cmd=config.cmd,
        working_dir=config.working_dir,
        labels=MappingProxyType(labels),
        cuda=cuda,
        driver_libraries=libs,
        loader=loader,
        gpu=gpu,
        gpu_code=gpu_code_facts(fs) if fs is not None else (),
        base=base_image_facts(image.annotations, labels, env, config.history),
        complete=fs is not None,
        warnings=tuple(dict.fromkeys(warnings)),
        unread_files=tuple(unread),
        arch_lists=image_arch_lists(env, config.history, fs),
    )
