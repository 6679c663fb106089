"""The one native part: the tar walk's inner loop (imagelint/layers/_tarscan.c).

Optional: where it cannot be built (no C compiler), imagelint installs without it and walks
layers with the Python parser alone (same results, slower on images of many small files).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("imagelint.layers._tarscan", ["imagelint/layers/_tarscan.c"], optional=True)])
