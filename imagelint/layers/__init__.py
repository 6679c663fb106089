"""Read layers once: decompress, walk tar headers, keep what facts need, merge into one view.

Public entry points (implemented in the modules named):
  ``read_image_filesystem(image, spec, options) -> ImageFilesystem``  (reader.py)
  ``ImageFilesystem``  the merged, whiteout-applied, symlink-resolving view (filesystem.py)
  ``CaptureSpec``, ``CaptureRule``, ``LayerExtract``, ``Entry``  (model.py)
"""
