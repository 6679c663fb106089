"""The matrix's queries, one module per subject; ``imagelint.matrix.model.Matrix`` has them all.

  cuda.py    CUDA releases and drivers: floors, branches, lifecycle, forward compatibility, PTX ISA
  gpus.py    GPU products, architecture names, NVIDIA's names
  images.py  NGC and official CUDA images, Jetson releases, image platforms
  stack.py   container toolkit, device plugin (and its resource names), GPU Operator
"""
