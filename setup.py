"""The native parts: the tar walk's inner loop (imagelint/layers/_tarscan.c) and the text-facts
keyword search and the fatbin scan's magic search (imagelint/facts/_hitscan.c).

Optional: where they cannot be built (no C compiler), imagelint installs without them and walks
layers and searches text in Python alone (same results, slower on images of many small files
or much text).

And the shipped TOML data compiled to JSON (imagelint/matrix/compiled.py): ``build_py`` writes
``NAME.toml.json`` beside each ``matrices/NAME.toml`` in the built package, so that a run with an
empty cache (a fresh CI runner) parses no TOML. The TOML stays the source of truth; nothing
generated is written into the source tree.
"""

import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py


class build_py_with_compiled_matrices(build_py):
    def run(self) -> None:
        super().run()
        if self.dry_run:
            return
        sys.path.insert(0, str(Path(__file__).resolve().parent))  # this tree's imagelint, not an installed one
        try:
            from imagelint.matrix.compiled import compile_directory
        finally:
            sys.path.pop(0)
        target = Path(self.build_lib) / "imagelint" / "matrices"
        for written in compile_directory(target):
            self.announce(f"compiled {written.name}", level=2)


setup(cmdclass={"build_py": build_py_with_compiled_matrices},
      ext_modules=[Extension("imagelint.layers._tarscan", ["imagelint/layers/_tarscan.c"], optional=True),
                   Extension("imagelint.facts._hitscan", ["imagelint/facts/_hitscan.c"], optional=True)])
