"""What the text-facts scan reads of an image: the per-shape counts benchmarks/README.md reports.

    python3 benchmarks/scan_counts.py WORK/img-torch-1-real/layout [--tag base]

Walks every layer of an OCI layout (Python's tarfile, outside any timing), matches each member
against imagelint's capture rules, and runs the text-facts scanner as the layer reader does
(the head decision first; a file it holds whole, one C pass for keywords; then the scanner over
the rest): candidate files, files the head decided (not read on), files the keyword pass settled
(no keyword: nothing decoded), files and bytes the line scanner read to the end, and lines handed
to Python (the lines that hold a keyword; ``gpuindex.hit_lines``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from imagelint.facts import textscan  # noqa: E402
from imagelint.facts.capture import CAPTURE_SPEC  # noqa: E402
from imagelint.layers.match import RuleMatcher  # noqa: E402

CHUNK = 1 << 16


def scan_counts(layout: Path, tag: str = "base") -> dict[str, int]:
    index = json.loads((layout / "index.json").read_text())
    blobs = layout / "blobs" / "sha256"
    entry = next(m for m in index["manifests"] if m["annotations"]["org.opencontainers.image.ref.name"] == tag)
    manifest = json.loads((blobs / entry["digest"].split(":", 1)[1]).read_bytes())
    matcher = RuleMatcher(CAPTURE_SPEC.rules)
    counts = {"text_candidates": 0, "decided_by_head": 0, "keyword_pass": 0, "files_read": 0, "bytes_read": 0,
              "lines_to_python": 0}
    for layer in manifest["layers"]:
        with tarfile.open(blobs / layer["digest"].split(":", 1)[1], "r|gz") as tf:
            for member in tf:
                if not member.isfile():
                    continue
                rule = matcher.match(member.name.lstrip("./"))
                if rule is None or rule.action != "scan" or rule.name != textscan.TEXT_SCANNER:
                    continue
                counts["text_candidates"] += 1
                f = tf.extractfile(member)
                assert f is not None
                head = f.read(textscan.SNIFF_BYTES)
                if textscan.decide_head(member.name, member.size, head) is not None:
                    counts["decided_by_head"] += 1
                    continue
                if member.size - len(head) <= CHUNK:  # the reader holds it whole: one C pass may settle it
                    head += f.read()
                    if textscan.TextFactsScanner.settled_by_keyword_pass(member.name, member.size, head) is not None:
                        counts["keyword_pass"] += 1
                        continue
                scanner = textscan.TextFactsScanner()
                scanner.begin(member.name, member.size)
                scanner.feed(head)
                while not scanner.skippable() and (chunk := f.read(CHUNK)):
                    scanner.feed(chunk)
                scanner.result()
                if scanner.scanned_bytes:
                    counts["files_read"] += 1
                    counts["bytes_read"] += scanner.scanned_bytes
                counts["lines_to_python"] += scanner.lines_matched
    return counts


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("layout", type=Path)
    ap.add_argument("--tag", default="base")
    args = ap.parse_args()
    print(json.dumps(scan_counts(args.layout, args.tag), indent=2))
