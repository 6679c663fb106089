"""The captures a run may ask for by name.

``core.check.capture_for`` picks one from the selected rules' declared needs;
``facts.capture.spec_named`` builds its ``layers.model.CaptureSpec``, only when layers are read.
A name keys the caches without importing every fact module (whose code the cache's fingerprint
covers), or the layer model: a warm check reads no layer and needs neither.
"""

CAPTURE_STANDARD = "standard"
CAPTURE_WITHOUT_GPU_CODE = "standard-without-gpu-code"
