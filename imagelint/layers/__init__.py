"""Read layers once: decompress, walk tar headers, keep what facts need, merge into one view.

Public entry points (implemented in the modules named):
  ``read_image_filesystem(image, spec, limits=None, workers=2, extract=extract_layer) -> ImageFilesystem``  (reader.py)
  ``extract_layer(layer, spec, limits) -> LayerExtract``; ``extract_to_bytes``/``extract_from_bytes``  (codec.py)
  ``ReadLimits``  (limits.py)
  ``ImageFilesystem``  the merged, whiteout-applied, symlink-resolving view (filesystem.py)
  ``LayerCache``, ``caching_extractor``  the per-layer cache (cache.py)
  ``CaptureSpec``, ``CaptureRule``, ``LayerExtract``, ``Entry``  (model.py)
"""
