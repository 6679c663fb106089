"""SARIF 2.1.0 that GitHub code scanning accepts, for every run (findings, none, unreadable images).

What code scanning needs, and how each part is met (GitHub's "SARIF support for
code scanning" and "SARIF results exceed limits" pages):

* **Every result has a physical location in a repository file.** Findings in
  Dockerfiles, manifests and app configs point at that file and line. Findings
  about an image (its config, env, labels, or a file inside it) point at the
  Dockerfile that built it, where known: ``--dockerfile [REF=]PATH``, an
  ``images = [{ ref, dockerfile }]`` entry of the config, or an
  ``org.opencontainers.image.source`` label whose URL names a file
  (``https://github.com/ORG/REPO/blob/REV/docker/Dockerfile``); else at the
  anchor file (``--sarif-artifact PATH``, else the config file, else under GitHub Actions the
  workflow file); with none of those, at the image's name as a pseudo-path
  (``ghcr.io/org/app``, result property ``pseudoPath``), as trivy's image SARIF does: code
  scanning takes it and lists the alerts under that name. The in-image
  location (path, layer, env var) stays in the message, the location's
  ``logicalLocations`` and the result's ``properties``: image paths are not
  repository files, so they never become artifact URIs.
* URIs are relative to the repository root (``GITHUB_WORKSPACE``, else the
  nearest directory holding ``.git``) with ``uriBaseId`` ``%SRCROOT%``.
* **Stable ``partialFingerprints``**: a hash of the rule, the image's name
  (without tag or digest, so a new build keeps its alerts), platform, pool and
  the in-image location — never line numbers of the anchor, so many findings on
  one anchor line stay separate alerts.
* **One run per image name** with ``automationDetails.id`` ``imagelint/NAME/``
  (lint's files share ``imagelint/files/``), so uploads of different images
  do not close each other's alerts. At most 20 runs per file.
* Limits: at most 25,000 results per run (the least severe are dropped first,
  with a notification saying how many), a gzip-compressed file under 10 MB,
  at most 20 tags per rule; rules carry ``tags``, ``precision``,
  ``problem.severity`` and, for rules tagged ``security``, ``security-severity``.

An unreadable image gets no run of its own when another image was read (an empty run for
its category would close its alerts on upload): its error notification goes into the first
readable run, whose invocation then says ``executionSuccessful: false``. When no image could be
read, each gets a run with the notification and no results (the docs' workflow does not upload
then: exit code 3).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

from imagelint.core.check import CheckRun
from imagelint.core.engine import ImageResult, SuppressedFinding
from imagelint.errors import UsageError
from imagelint.escape import uri_reference
from imagelint.facts.model import Provenance
from imagelint.lazyre import lazy_pattern
from imagelint.report import ReportOptions
from imagelint.report.artifacts import (
    REPOSITORY_KINDS,
    SarifArtifacts,
    repository_path,
    repository_root,
)
from imagelint.report.fragments import finding_lines
from imagelint.rules import RULES, RuleInfo
from imagelint.rules.base import SEVERITY_RANK, Finding

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/imagelint/imagelint"
SRCROOT = "%SRCROOT%"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "info": "recommendation"}
FINGERPRINT_KEY = "imagelintFinding/v1"

# GitHub's documented limits (hard limits: an upload over them is rejected whole).
MAX_RUNS = 20
MAX_RESULTS_PER_RUN = 25_000
MAX_GZIP_BYTES = 10 * 1024 * 1024
MAX_TAGS_PER_RULE = 20
PRECISIONS = ("very-high", "high", "medium", "low")

_SOURCE_LABEL = "org.opencontainers.image.source"
_REVISION_LABEL = "org.opencontainers.image.revision"
# A source URL that names a file: https://HOST/ORG/REPO/blob/REV/PATH (GitHub, Gitea) or /-/blob/ (GitLab).
_BLOB_PATH = lazy_pattern(r"^/[^/]+/[^/]+(?:/-)?/blob/[^/]+/(.+)$")


class SarifLimitError(UsageError):
    """SARIF that code scanning would refuse: over GitHub's limits, or no repository file to point at (exit 2)."""


def _uri(rel: str) -> str:
    return uri_reference(rel)  # imagelint.escape: every format's escaping in one place


def image_name(subject: str) -> str:
    """The image without tag or digest (``registry:ghcr.io/org/app:1.2`` → ``ghcr.io/org/app``)."""
    from imagelint.errors import ImagelintError
    from imagelint.reference import parse_reference, parse_registry_name

    try:
        ref = parse_reference(subject)
        if ref.kind in ("registry", "auto", "docker"):
            name = parse_registry_name(ref.value)
            return f"{name.registry}/{name.repository}"
        return os.path.normpath(ref.value).replace(os.sep, "/")
    except ImagelintError:
        return subject


def _category_slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._/:-]+", "-", name).strip("/-") or "image"


def _line_text(path: str, line: int, cache: dict[str, list[str] | None]) -> str | None:
    """Line ``line`` of a repository file (bounded read), for regions and fingerprints."""
    if path not in cache:
        try:
            with open(path, "rb") as fh:
                data = fh.read(8 * 1024 * 1024)
            cache[path] = data.decode("utf-8", "replace").splitlines()
        except OSError:
            cache[path] = None
    lines = cache[path]
    if lines is None or not 1 <= line <= len(lines):
        return None
    return lines[line - 1]


def _region(path: str | None, line: int, cache: dict[str, list[str] | None]) -> dict[str, int]:
    text = _line_text(path, line, cache) if path else None
    return {"startLine": line, "startColumn": 1, "endLine": line, "endColumn": max(len(text or "") + 1, 2)}


_INSTRUCTION = {"env": "ENV", "label": "LABEL", "Entrypoint": "ENTRYPOINT", "Cmd": "CMD", "User": "USER",
                "WorkingDir": "WORKDIR"}


def _dockerfile_line(path: str, loc: Provenance | None, cache: dict[str, list[str] | None]) -> int | None:
    """The Dockerfile line that most likely set what an image finding is about: the last
    ``ENV NAME`` / ``LABEL key`` / ``ENTRYPOINT`` … instruction naming it; else None (line 1)."""
    if loc is None:
        return None
    word = _INSTRUCTION.get(loc.kind) or (_INSTRUCTION.get(loc.key or "") if loc.kind == "config" else None)
    if word is None:
        return None
    _line_text(path, 1, cache)
    lines = cache.get(path) or []
    key = re.escape(loc.key) if loc.kind in ("env", "label") and loc.key else None
    pattern = re.compile(rf"^\s*{word}\s" + (rf".*(?<![\w.-]){key}(?![\w.-])" if key else ""), re.I)
    found = None
    for n, text in enumerate(lines, 1):
        if pattern.match(text):
            found = n
    return found


_FROM = lazy_pattern(r"^\s*FROM\s", re.I)


def dockerfile_line(path: str, loc: Provenance | None, cache: dict[str, list[str] | None]) -> int:
    """Where an image finding goes in the Dockerfile that built the image: the instruction that set
    what it is about (``_dockerfile_line``), else the last ``FROM`` (the stage the image is), else 1."""
    line = _dockerfile_line(path, loc, cache)
    if line is not None:
        return line
    _line_text(path, 1, cache)
    froms = [n for n, text in enumerate(cache.get(path) or [], 1) if _FROM.match(text)]
    return froms[-1] if froms else 1


def image_dockerfile(result: ImageResult, artifacts: SarifArtifacts) -> tuple[str | None, str]:
    """The repository file an image's findings belong to, and how it was chosen: its Dockerfile
    (``--dockerfile``, the config's ``images`` entry, the ``org.opencontainers.image.source``
    label), else the anchor file; ``(None, "image")`` when there is none."""
    explicit = artifacts.dockerfiles.get(result.subject) or artifacts.dockerfile
    if explicit:
        return explicit, "dockerfile"
    labelled = _source_label_path(result.source_labels, artifacts.root)
    if labelled:
        return labelled, "dockerfile (from the org.opencontainers.image.source label)"
    if artifacts.anchor:
        return artifacts.anchor, "anchor"
    return None, "image"


def pseudo_path(subject: str) -> str:
    """Where SARIF points an image's findings when no repository file stands for the image: the
    image's name as a path (``ghcr.io/org/app``), as trivy's image SARIF does. Code scanning takes
    the upload and lists the alerts under that name, with no source view."""
    name = image_name(subject)
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".", "..")]
    return "/".join(parts) or "image"


def _rule_descriptor(rule: RuleInfo) -> dict[str, Any]:
    tags = list(dict.fromkeys(rule.tags))[:MAX_TAGS_PER_RULE]
    props: dict[str, Any] = {
        "tags": tags,
        "precision": rule.precision if rule.precision in PRECISIONS else "high",
        "problem.severity": _PROBLEM_SEVERITY[rule.severity],
        "needs": list(rule.needs),
        "references": list(rule.references),
    }
    if rule.security_severity is not None and "security" in tags:
        props["security-severity"] = rule.security_severity
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.summary},
        "help": {"text": rule.doc, "markdown": rule.doc},
        "helpUri": f"{INFORMATION_URI}/blob/main/docs/rules.md#{rule.id.lower()}",
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": props,
    }


def _source_label_path(labels: Mapping[str, str], root: str) -> str | None:
    """A repository file named by the image's ``org.opencontainers.image.source`` URL, if it exists here."""
    url = labels.get(_SOURCE_LABEL)
    if not url:
        return None
    m = _BLOB_PATH.match(urllib.parse.urlsplit(url).path)
    if not m:
        return None
    rel = urllib.parse.unquote(m.group(1))
    candidate = os.path.normpath(os.path.join(root, rel))
    return candidate if os.path.isfile(candidate) and repository_path(candidate, root) else None


def _public_url(url: str) -> str:
    """A URL without user:password (labels are image-controlled and may carry a token)."""
    parts = urllib.parse.urlsplit(url)
    if parts.username or parts.password:
        host = parts.hostname or ""
        return urllib.parse.urlunsplit((parts.scheme, host + (f":{parts.port}" if parts.port else ""), parts.path, "", ""))
    return url


class _Writer:
    """Builds the runs of one SARIF log."""

    def __init__(self, run: CheckRun, artifacts: SarifArtifacts) -> None:
        self.run = run
        self.artifacts = artifacts
        self.rules = [RULES[i] for i in run.rule_ids]
        self.rule_index = {r.id: n for n, r in enumerate(self.rules)}
        self.lines: dict[str, list[str] | None] = {}

    # --- where a result points --------------------------------------------------------------

    def image_artifact(self, result: ImageResult) -> tuple[str | None, str]:
        """The repository file for an image's findings, and how it was chosen."""
        return image_dockerfile(result, self.artifacts)

    def physical(self, path: str | None, line: int | None, image: str | None = None) -> dict[str, Any]:
        rel = repository_path(path, self.artifacts.root) if path else None
        if rel is None and image is not None and path is None:
            # No repository file stands for this image: its name is the pseudo-path (trivy's way).
            return {"artifactLocation": {"uri": _uri(pseudo_path(image))}, "region": _region(None, 1, self.lines)}
        if rel is None:
            raise SarifLimitError(
                "SARIF needs a repository file for every finding"
                + (f" ({path} is outside the repository {self.artifacts.root})" if path else "")
            )
        return {
            "artifactLocation": {"uri": _uri(rel), "uriBaseId": SRCROOT},
            "region": _region(path, int(line) if line and line > 0 else 1, self.lines),
        }

    def location(self, f: Finding, result: ImageResult) -> tuple[dict[str, Any], str, int | None]:
        loc = f.location
        pseudo = result.subject if result.kind == "image" else None  # an image with no repository file
        path: str | None  # None: no repository file stands for the finding
        if loc is not None and loc.kind in REPOSITORY_KINDS and loc.source:
            path, line = loc.source, loc.line
        elif result.kind == "target":  # the pools' findings: on the target file, else where the first image's or file's go
            inside = result.path and repository_path(result.path, self.artifacts.root)
            first = next((r for r in self.run.results if r.kind != "target" and not r.error), result)
            path = result.path if inside else (self.image_artifact(first)[0] if first.kind in ("image", "target")
                                               else first.path or first.subject)
            pseudo = first.subject if not inside and first.kind == "image" else None
            line = None
        elif result.kind != "image":
            path = result.path or result.subject
            line = loc.line if loc is not None and loc.source in (None, path) else None
        else:
            path, how = self.image_artifact(result)
            line = dockerfile_line(path, loc, self.lines) if path and how.startswith("dockerfile") else None
        out: dict[str, Any] = {"physicalLocation": self.physical(path, line, pseudo)}
        if loc is not None and (result.kind == "image" or loc.kind not in REPOSITORY_KINDS):
            where = loc.describe()
            out["logicalLocations"] = [{"name": where[:500], "kind": "resource" if loc.kind == "file" else "variable" if loc.kind == "env" else "object"}]
            out["message"] = {"text": f"in the image: {where}" if result.kind == "image" else where}
        return out, path or "", line

    # --- one result -------------------------------------------------------------------------

    def fingerprint(self, f: Finding, result: ImageResult, path: str, line: int | None) -> str:
        loc = f.location
        if result.kind == "image":
            parts = [image_name(result.subject), result.platform or ""]
            if loc is not None:
                parts += [loc.kind, loc.key or "", loc.path or "", str(loc.line or "") if loc.kind == "file" else ""]
        else:
            rel = repository_path(path, self.artifacts.root) or path
            parts_subject = [result.subject]
            text = _line_text(path, line, self.lines) if line else None
            # The line's text, not its number: an edit above the finding keeps the alert.
            parts = [rel, *parts_subject, " ".join(text.split()) if text is not None else str(line or ""),
                     loc.key or "" if loc else ""]
        parts += [f.rule, f.pool or ""]
        return hashlib.sha256("\0".join(parts).encode("utf-8", "replace")).hexdigest()[:32]

    def result(self, f: Finding, result: ImageResult, suppressed: SuppressedFinding | None = None) -> dict[str, Any]:
        location, path, line = self.location(f, result)
        pool = f" [pool {f.pool}]" if f.pool else ""
        subject = f"{result.subject}: " if result.kind == "image" else ""
        where = f" (in the image: {f.location.describe()})" if f.location is not None and result.kind == "image" else ""
        head, details = finding_lines(f)
        # The first line is what code scanning shows where space is short: the headline.
        text = "\n".join([f"{subject}{head}{pool}{where}", *details]) + (f"\nFix: {f.remediation}" if f.remediation else "")
        props: dict[str, Any] = {"image" if result.kind == "image" else "file": result.subject, "severity": f.severity}
        if result.digest:
            props["digest"] = result.digest
        if result.platform:
            props["platform"] = result.platform
        if f.pool:
            props["pool"] = f.pool
        if f.location is not None:
            props["location"] = f.location.describe()
            if f.location.kind == "file" and f.location.path:
                props["imagePath"] = "/" + f.location.path
            if f.location.layer_digest:
                props["layerDigest"] = f.location.layer_digest
            if f.location.layer_index is not None:
                props["layerIndex"] = f.location.layer_index
        for label, key in ((_SOURCE_LABEL, "imageSource"), (_REVISION_LABEL, "imageRevision")):
            if label in result.source_labels:
                props[key] = _public_url(result.source_labels[label])
        if "uriBaseId" not in location["physicalLocation"]["artifactLocation"]:
            props["pseudoPath"] = True  # the image's name, not a file of the repository
        out: dict[str, Any] = {
            "ruleId": f.rule,
            "level": _LEVEL[f.severity],
            "message": {"text": text},
            "locations": [location],
            "partialFingerprints": {FINGERPRINT_KEY: self.fingerprint(f, result, path, line)},
            "properties": props,
        }
        if f.rule in self.rule_index:
            out["ruleIndex"] = self.rule_index[f.rule]
        if suppressed is not None:
            kind = "inSource" if suppressed.by.startswith(("label", "comment")) else "external"
            out["suppressions"] = [{"kind": kind, "justification": suppressed.reason, "status": "accepted"}]
        return out

    # --- runs -------------------------------------------------------------------------------

    def groups(self) -> list[tuple[str, list[ImageResult]]]:
        """(category, results): one per image name; every file result of lint in one."""
        groups: dict[str, list[ImageResult]] = {}
        for r in self.run.results:
            category = f"imagelint/{_category_slug(image_name(r.subject))}" if r.kind == "image" else "imagelint/files"
            groups.setdefault(category, []).append(r)
        if not groups:
            groups["imagelint/files"] = []
        # The target's own findings (said once per run) ride in the first run of images or files.
        if "imagelint/files" in groups and len(groups) > 1 and all(r.kind == "target" for r in groups["imagelint/files"]):
            next(rs for c, rs in groups.items() if c != "imagelint/files").extend(groups.pop("imagelint/files"))
        # An image that could not be read must not get a run of its own next to readable ones: an
        # upload with an empty run for its category would mark all its alerts fixed. Its error goes
        # into the first readable run's invocation (executionSuccessful false) instead.
        unreadable = [c for c, rs in groups.items() if all(r.error for r in rs)]
        readable = [c for c in groups if c not in unreadable]
        if unreadable and readable:
            for c in unreadable:
                groups[readable[0]].extend(groups.pop(c))
        if len(groups) > MAX_RUNS:
            raise SarifLimitError(
                f"GitHub code scanning takes at most {MAX_RUNS} runs per SARIF file (one per image) and this "
                f"check has {len(groups)} images: split them over several imagelint calls and SARIF files"
            )
        return list(groups.items())

    def sarif_run(self, category: str, results: list[ImageResult]) -> dict[str, Any]:
        sarif_results: list[dict[str, Any]] = []
        notifications: list[dict[str, Any]] = []
        for r in results:
            if r.error:
                notifications.append({"level": "error", "message": {"text": f"{r.subject}: {r.error}"},
                                      "descriptor": {"id": "image-unreadable"}})
                continue
            sarif_results.extend(self.result(f, r) for f in r.findings)
            sarif_results.extend(self.result(s.finding, r, s) for s in r.suppressed)
            if r.kind == "image" and (r.findings or r.suppressed) and self.image_artifact(r)[0] is None:
                notifications.append({"level": "note", "message": {"text": (
                    f"{r.subject}: no repository file stands for this image, so its findings point at "
                    f"{pseudo_path(r.subject)!r}, the image's name (as trivy's image SARIF does); give "
                    "--dockerfile PATH to show them on the Dockerfile")}})
            notifications.extend({"level": "note", "message": {"text": n}} for n in r.notices)
        if len(sarif_results) > MAX_RESULTS_PER_RUN:
            ranked = sorted(range(len(sarif_results)), key=lambda i: (-SEVERITY_RANK[sarif_results[i]["properties"]["severity"]], i))
            keep = sorted(ranked[:MAX_RESULTS_PER_RUN])
            dropped = len(sarif_results) - len(keep)
            sarif_results = [sarif_results[i] for i in keep]
            notifications.append({"level": "warning", "message": {"text": (
                f"{dropped} result(s) of the least severity left out: GitHub code scanning takes at most "
                f"{MAX_RESULTS_PER_RUN} results per run (the JSON report has them all)")}})
        _dedupe_fingerprints(sarif_results)
        notifications.extend({"level": "warning", "message": {"text": n}} for n in self.run.notices)
        invocation: dict[str, Any] = {
            "executionSuccessful": all(r.ok for r in results),
            "exitCode": self.run.exit_code,
        }
        if notifications:
            invocation["toolExecutionNotifications"] = notifications
        return {
            "tool": {
                "driver": {
                    "name": "imagelint",
                    "version": self.run.tool_version,
                    "semanticVersion": self.run.tool_version,
                    "informationUri": INFORMATION_URI,
                    "rules": [_rule_descriptor(r) for r in self.rules],
                }
            },
            "automationDetails": {"id": f"{category}/{self.run.started}"},
            "invocations": [invocation],
            "originalUriBaseIds": {SRCROOT: {"uri": _root_uri(self.artifacts.root)}},
            "results": sarif_results,
            "columnKind": "unicodeCodePoints",
            "properties": {
                "matrixVersion": self.run.matrix_version,
                "matrixOrigin": self.run.matrix_origin,
                "failOn": self.run.config.fail_on,
                "subjects": [r.subject for r in results],
            },
        }


def _root_uri(root: str) -> str:
    uri = "file://" + urllib.parse.quote(root.replace(os.sep, "/"), safe="/")
    return uri if uri.endswith("/") else uri + "/"


def _dedupe_fingerprints(results: Iterable[dict[str, Any]]) -> None:
    """Two results with one fingerprint would merge into one alert: number the repeats."""
    seen: dict[str, int] = {}
    for res in results:
        fp = res["partialFingerprints"][FINGERPRINT_KEY]
        n = seen.get(fp, 0)
        seen[fp] = n + 1
        if n:
            res["partialFingerprints"][FINGERPRINT_KEY] = f"{fp}:{n}"


def default_artifacts(run: CheckRun) -> SarifArtifacts:
    """Without CLI options: the repository of the working directory, the config file as anchor."""
    root = repository_root()
    return SarifArtifacts(root=root, anchor=run.config.path, dockerfiles=dict(run.config.dockerfiles))


def to_dict(run: CheckRun, artifacts: SarifArtifacts | None = None) -> dict[str, Any]:
    writer = _Writer(run, artifacts or default_artifacts(run))
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [writer.sarif_run(category, results) for category, results in writer.groups()],
    }


def render(run: CheckRun, options: ReportOptions) -> str:
    doc = to_dict(run, options.sarif_artifacts)
    text = json.dumps(doc, indent=2) + "\n"
    if len(text) > MAX_GZIP_BYTES:  # cheap check first: only a large file can compress to over the limit
        text = _within_size(doc, text)
    return text


def _within_size(doc: dict[str, Any], text: str) -> str:
    """The file as it is, else compacted, if the gzip-compressed file fits GitHub's 10 MB; else refuse."""
    def fits(t: str) -> bool:
        return len(gzip.compress(t.encode("utf-8"), compresslevel=6)) < MAX_GZIP_BYTES

    if fits(text):
        return text
    text = json.dumps(doc, separators=(",", ":")) + "\n"
    if fits(text):
        return text
    raise SarifLimitError(
        f"the SARIF file would be over GitHub's {MAX_GZIP_BYTES // (1024 * 1024)} MB (gzip) limit: "
        "select fewer rules or images per SARIF file"
    )
