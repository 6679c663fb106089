"""The native parts: the tar walk's inner loop (imagelint/layers/_tarscan.c) and the text-facts
keyword search and the fatbin scan's magic search (imagelint/facts/_hitscan.c).

Optional: where they cannot be built (no C compiler), imagelint installs without them and walks
layers and searches text in Python alone (same results, slower on images of many small files
or much text).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("imagelint.layers._tarscan", ["imagelint/layers/_tarscan.c"], optional=True),
                   Extension("imagelint.facts._hitscan", ["imagelint/facts/_hitscan.c"], optional=True)])
