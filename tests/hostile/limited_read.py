"""``python -m tests.hostile.limited_read REF... [--max-layer N] [--max-image N] [--max-member N]``.

What ``imagelint inspect`` does (open → read every layer → facts), with ``ReadLimits``
set from the command line, since the CLI exposes no limit flags. Prints errors
exactly as the CLI does (``imagelint: error: ...``, exit code of the error class),
so the bomb tests can run it in a child process and measure its memory and time.
Each REF gets one stdout line: ``REF<TAB>exit=N<TAB>message``; the process exits with
the largest code.
"""

from __future__ import annotations

import argparse
import sys

from imagelint.errors import ImagelintError
from imagelint.facts.capture import CAPTURE_SPEC
from imagelint.facts.collect import collect_image_facts
from imagelint.layers.limits import DEFAULT_LIMITS, ReadLimits
from imagelint.layers.reader import read_image_filesystem
from imagelint.sources import SourceOptions, open_images


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("refs", nargs="+")
    parser.add_argument("--max-layer", type=int, default=DEFAULT_LIMITS.max_layer_inflated_bytes)
    parser.add_argument("--max-image", type=int, default=DEFAULT_LIMITS.max_image_inflated_bytes)
    parser.add_argument("--max-member", type=int, default=DEFAULT_LIMITS.max_member_read_bytes)
    parser.add_argument("--insecure-registry", action="append", default=[])
    ns = parser.parse_args()
    limits = ReadLimits(max_layer_inflated_bytes=ns.max_layer, max_image_inflated_bytes=ns.max_image,
                        max_member_read_bytes=ns.max_member)
    worst = 0
    for ref in ns.refs:
        try:
            for image in open_images(ref, SourceOptions(insecure_registries=tuple(ns.insecure_registry))):
                facts = collect_image_facts(image, read_image_filesystem(image, CAPTURE_SPEC, limits))
                print(f"{ref}\texit=0\t{facts.digest} warnings={len(facts.warnings)}", flush=True)
        except ImagelintError as exc:
            print(f"{ref}\texit={exc.exit_code}\timagelint: error: {exc.message}", flush=True)
            worst = max(worst, exc.exit_code)
    return worst


if __name__ == "__main__":
    sys.exit(main())
