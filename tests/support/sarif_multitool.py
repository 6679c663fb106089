"""The SARIF SDK's validator (npm ``@microsoft/sarif-multitool``), with its GitHub ingestion rules on.

Installed once with npm into a cache directory outside the repository
(``$IMAGELINT_TEST_TOOLS``, else ``~/.cache/imagelint-tests``); ``.ci/run`` does the
same install up front. The GitHub rules (GH1001 …: a physical location on every
result, regions, relative URIs …) are off unless a policy file enables them and
``--rule-kind`` names ``Gh``: the policy is written from the rule list the
installed package documents, so a newer validator's new GH rules are enabled too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "@microsoft/sarif-multitool"


def tools_dir() -> Path:
    return Path(os.environ.get("IMAGELINT_TEST_TOOLS") or Path.home() / ".cache" / "imagelint-tests") / "sarif-multitool"


@dataclass(frozen=True)
class Validator:
    binary: Path
    policy: Path

    def problems(self, *sarif_files: Path, workdir: Path) -> list[str]:
        """Errors and warnings the validator reports for the files (notes are advice, not problems)."""
        out = workdir / "multitool-out.sarif"
        out.unlink(missing_ok=True)
        # Console logging of GH results crashes this version (a message format bug): log to a file.
        proc = subprocess.run(
            [str(self.binary), "validate", *map(str, sarif_files), "--config", str(self.policy),
             "--quiet", "true", "--output", str(out), "--rule-kind", "Gh;Sarif"],
            capture_output=True, text=True, timeout=300,
        )
        if not out.is_file():
            raise AssertionError(f"sarif-multitool wrote no log (exit {proc.returncode}): {proc.stdout[-800:]} {proc.stderr[-800:]}")
        log = json.loads(out.read_text(encoding="utf-8-sig"))
        found = []
        for run in log.get("runs", []):
            for res in run.get("results", []):
                if res.get("level", "warning") in ("error", "warning"):
                    where = res.get("locations", [{}])[0].get("physicalLocation", {}).get("artifactLocation", {}).get("uri", "")
                    args = res.get("message", {}).get("arguments", [])
                    found.append(f"{res.get('ruleId')} {res.get('level')} {where}: {args}")
            for note in run.get("invocations", [{}])[0].get("toolExecutionNotifications", []):
                if note.get("level") == "error":
                    found.append(f"validator error: {note.get('message', {}).get('text', '')[:300]}")
        return found


def validator() -> tuple[Validator | None, str]:
    """(the validator, "") or (None, why it could not be installed)."""
    npm = shutil.which("npm")
    if npm is None:
        return None, "npm is not installed (apt-get install npm)"
    root = tools_dir()
    binary = root / "node_modules" / "@microsoft" / "sarif-multitool-linux" / "Sarif.Multitool"
    if not binary.is_file():
        root.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(root), PACKAGE],
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0 or not binary.is_file():
            return None, f"npm install {PACKAGE} failed: {(proc.stderr or proc.stdout).strip()[-300:]}"
    docs = binary.parent / "Sarif.Multitool.Library.xml"
    names = sorted(set(re.findall(r"(GH\d{4})_([A-Za-z]+)_FullDescription_Text", docs.read_text(encoding="utf-8-sig"))))
    if not names:
        return None, f"{docs} lists no GH rules: cannot enable GitHub's ingestion rules"
    policy = root / "github-rules.configuration.xml"
    body = "".join(f'  <Properties Key="{rid}.{name}.Options">\n    <Property Key="RuleEnabled" Value="Error" />\n  </Properties>\n'
                   for rid, name in names)
    policy.write_text(f'<?xml version="1.0" encoding="utf-8"?>\n<Properties>\n{body}</Properties>\n', encoding="utf-8")
    return Validator(binary, policy), ""
