"""GitHub code scanning's documented SARIF requirements, as assertions.

From GitHub's "SARIF support for code scanning" (supported properties, required
ones marked) and "SARIF results exceed one or more limits" (hard limits: an upload
over one is rejected whole). Every SARIF imagelint writes in the suite goes through
``github_problems``; the checks are stricter than the OASIS schema, which lets a
result without a physical location or a fingerprint through.
"""

from __future__ import annotations

import gzip
import json
import os
import urllib.parse
from collections import Counter
from pathlib import Path
from typing import Any

MAX_RUNS = 20
MAX_RESULTS_PER_RUN = 25_000
MAX_RULES_PER_RUN = 25_000
MAX_LOCATIONS_PER_RESULT = 10  # "up to a maximum of 10"; only the first is used
MAX_TAGS_PER_RULE = 20
MAX_GZIP_BYTES = 10 * 1024 * 1024
PRECISIONS = {"very-high", "high", "medium", "low"}
PROBLEM_SEVERITIES = {"error", "warning", "recommendation"}
LEVELS = {"none", "note", "warning", "error"}


def github_problems(doc: dict[str, Any], repo_root: Path | str, text: str | None = None) -> list[str]:
    """Everything in ``doc`` that code scanning would refuse or mis-place; [] when it is fine.

    ``repo_root``: the checkout the upload belongs to: every artifact URI must name a file in it.
    """
    root = Path(repo_root).resolve()
    problems: list[str] = []

    def bad(where: str, what: str) -> None:
        problems.append(f"{where}: {what}")

    if doc.get("version") != "2.1.0":
        bad("version", "must be 2.1.0")
    if not doc.get("$schema"):
        bad("$schema", "missing")
    raw = (text if text is not None else json.dumps(doc)).encode()
    if len(gzip.compress(raw)) >= MAX_GZIP_BYTES:
        bad("file", "over 10 MB gzip-compressed")
    runs = doc.get("runs")
    if not isinstance(runs, list) or not runs:
        bad("runs", "at least one run is needed")
        return problems
    if len(runs) > MAX_RUNS:
        bad("runs", f"{len(runs)} runs, GitHub takes at most {MAX_RUNS}")
    categories = []
    for n, run in enumerate(runs):
        w = f"runs[{n}]"
        driver = run.get("tool", {}).get("driver", {})
        if not driver.get("name"):
            bad(f"{w}.tool.driver.name", "required")
        rules = driver.get("rules", [])
        if len(rules) > MAX_RULES_PER_RUN:
            bad(f"{w}.tool.driver.rules", "too many rules")
        for i, rule in enumerate(rules):
            rw = f"{w}.tool.driver.rules[{i}]"
            if not rule.get("id"):
                bad(rw, "id required")
            for key in ("shortDescription", "fullDescription"):
                if not rule.get(key, {}).get("text"):
                    bad(f"{rw}.{key}.text", "required")
            if not rule.get("help", {}).get("text"):
                bad(f"{rw}.help.text", "required")
            props = rule.get("properties", {})
            tags = props.get("tags", [])
            if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
                bad(f"{rw}.properties.tags", "must be a list of strings")
            elif len(tags) > MAX_TAGS_PER_RULE:
                bad(f"{rw}.properties.tags", f"{len(tags)} tags, at most {MAX_TAGS_PER_RULE}")
            if "precision" in props and props["precision"] not in PRECISIONS:
                bad(f"{rw}.properties.precision", f"{props['precision']!r} not one of {sorted(PRECISIONS)}")
            if "problem.severity" in props and props["problem.severity"] not in PROBLEM_SEVERITIES:
                bad(f"{rw}.properties.problem.severity", repr(props["problem.severity"]))
            if "security-severity" in props:
                value = props["security-severity"]
                try:
                    ok = isinstance(value, str) and 0.0 <= float(value) <= 10.0
                except ValueError:
                    ok = False
                if not ok:
                    bad(f"{rw}.properties.security-severity", f"{value!r}: a string holding 0.0 .. 10.0")
                if "security" not in tags:
                    bad(f"{rw}.properties.security-severity", "only rules tagged 'security' are scored")
            level = rule.get("defaultConfiguration", {}).get("level")
            if level is not None and level not in LEVELS:
                bad(f"{rw}.defaultConfiguration.level", repr(level))
        automation = run.get("automationDetails", {}).get("id")
        if not automation or "/" not in automation:
            bad(f"{w}.automationDetails.id", "needed so uploads of different images do not replace each other")
        else:
            categories.append(automation.rsplit("/", 1)[0])
        base_ids = run.get("originalUriBaseIds", {})
        results = run.get("results")
        if not isinstance(results, list):
            bad(f"{w}.results", "required (may be empty)")
            continue
        if len(results) > MAX_RESULTS_PER_RUN:
            bad(f"{w}.results", f"{len(results)} results, at most {MAX_RESULTS_PER_RUN}")
        identities = Counter()
        for j, res in enumerate(results):
            rw = f"{w}.results[{j}]"
            rule_id = res.get("ruleId")
            if not rule_id:
                bad(f"{rw}.ruleId", "required")
            if "ruleIndex" in res and (not 0 <= res["ruleIndex"] < len(rules) or rules[res["ruleIndex"]]["id"] != rule_id):
                bad(f"{rw}.ruleIndex", "does not point at the result's rule")
            if res.get("level", "warning") not in LEVELS:
                bad(f"{rw}.level", repr(res.get("level")))
            message = res.get("message", {})
            if not message.get("text") or "id" in message or "arguments" in message:
                bad(f"{rw}.message", "text required (flattened, no id/arguments)")
            locations = res.get("locations")
            if not isinstance(locations, list) or not locations:
                bad(f"{rw}.locations", "at least one location is required (GitHub rejects the whole upload)")
                continue
            if len(locations) > MAX_LOCATIONS_PER_RESULT:
                bad(f"{rw}.locations", f"{len(locations)} locations, at most {MAX_LOCATIONS_PER_RESULT}")
            first = locations[0]
            phys = first.get("physicalLocation")
            if not phys:
                bad(f"{rw}.locations[0].physicalLocation", "required")
                continue
            art = phys.get("artifactLocation", {})
            uri = art.get("uri")
            if not uri:
                bad(f"{rw}.locations[0].physicalLocation.artifactLocation.uri", "required")
                continue
            parts = urllib.parse.urlsplit(uri)
            if parts.scheme or uri.startswith("/"):
                bad(f"{rw}...artifactLocation.uri", f"{uri!r}: must be relative to the repository root")
            base = art.get("uriBaseId")
            if base is not None and base != "%SRCROOT%" and base not in base_ids:
                bad(f"{rw}...artifactLocation.uriBaseId", f"{base!r} is not the repository root")
            path = root / urllib.parse.unquote(parts.path)
            # An image's name as a pseudo-path (trivy's image SARIF; no uriBaseId): code scanning takes
            # it and lists the alert under that name. It must never pass for a repository file.
            if res.get("properties", {}).get("pseudoPath") is True and base is None:
                if path.is_file():
                    bad(f"{rw}...artifactLocation.uri", f"{uri!r}: a pseudo-path that is a repository file")
            elif not path.is_file() or not str(path.resolve()).startswith(str(root) + os.sep):
                bad(f"{rw}...artifactLocation.uri", f"{uri!r} is not a file of the repository {root}")
            region = phys.get("region")
            if not region:
                bad(f"{rw}.locations[0].physicalLocation.region", "required")
            else:
                for key in ("startLine", "startColumn", "endLine", "endColumn"):
                    if not isinstance(region.get(key), int) or region[key] < 1:
                        bad(f"{rw}...region.{key}", "a positive integer is required")
                if isinstance(region.get("endLine"), int) and isinstance(region.get("startLine"), int) \
                        and region["endLine"] < region["startLine"]:
                    bad(f"{rw}...region", "ends before it starts")
            fps = res.get("partialFingerprints")
            if not isinstance(fps, dict) or not fps or not all(isinstance(v, str) and v for v in fps.values()):
                bad(f"{rw}.partialFingerprints", "required: stable strings that identify the result across runs")
            else:
                identities[(rule_id, uri, tuple(sorted(fps.items())))] += 1
        for identity, count in identities.items():
            if count > 1:
                bad(w, f"{count} results share rule, file and fingerprint {identity}: they would merge into one alert")
    for category, count in Counter(categories).items():
        if count > 1:
            bad("runs", f"{count} runs share the category {category!r}: GitHub refuses that")
    return problems


def assert_github_accepts(doc: dict[str, Any], repo_root: Path | str, text: str | None = None) -> None:
    problems = github_problems(doc, repo_root, text)
    assert not problems, "GitHub code scanning would refuse this SARIF:\n" + "\n".join(problems[:20])
