"""``Provenance``: where a fact came from. Every fact type carries one (``imagelint.facts.model``,
``imagelint.facts.static_model``; both modules offer it, this is its home)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Provenance:
    """Where a fact came from.

    kind:
      ``env``         image config env var ``key``
      ``config``      another config field (``key`` = Entrypoint, Cmd, WorkingDir, User)
      ``label``       config label ``key``
      ``annotation``  manifest/index annotation ``key``
      ``history``     config history entry (``line`` = its index)
      ``file``        a file in the image: ``path`` (resolved), ``via`` (the path as
                      reached, through symlinks), ``layer_digest``/``layer_index``
                      of the layer that last wrote it, ``line`` inside it
      ``dockerfile``  a Dockerfile instruction: ``source`` = the file, ``line``
      ``manifest``    a Kubernetes object: ``source`` = the file, ``line``,
                      ``key`` = a JSON-path-like locator (``spec.containers[0].env[1]``)
      ``appconfig``   a config file in the repository: ``source`` = the file, ``line``
    """

    kind: str
    key: str | None = None
    path: str | None = None
    via: str | None = None
    layer_digest: str | None = None
    layer_index: int | None = None
    line: int | None = None
    source: str | None = None

    def describe(self) -> str:
        """One human-readable location, e.g. ``/usr/local/cuda/version.json (layer 3 sha256:ab12…)``."""
        if self.kind == "env":
            return f"env {self.key}"
        if self.kind in ("config", "label", "annotation"):
            return f"{self.kind} {self.key}"
        if self.kind == "history":
            return f"history[{self.line}]"
        if self.kind == "file":
            where = "/" + (self.path or "")
            if self.via and self.via != self.path:
                where = f"/{self.via} -> {where}"
            if self.line:
                where += f":{self.line}"
            if self.layer_index is not None:
                where += f" (layer {self.layer_index}"
                if self.layer_digest:
                    where += f" {self.layer_digest[:19]}"
                where += ")"
            return where
        loc = self.source or ""
        if self.line:
            loc += f":{self.line}"
        if self.key:
            loc += f" {self.key}"
        return loc

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}
