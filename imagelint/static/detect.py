"""Which kind of repository file a path is: by name first, then by content.

Kinds: ``dockerfile`` (``Dockerfile``, ``Dockerfile.*``, ``Dockerfile-*``, ``*.dockerfile``,
``Containerfile``), ``manifest`` (Kubernetes YAML or JSON), ``compose`` (a Docker Compose file), ``appconfig`` (DeepStream app / nvinfer /
nvinferserver configs, INI or YAML), ``script`` (shell and Python files), or None
(not something ``imagelint lint`` reads; skipped with a note, never an error,
because pre-commit passes every staged file that matches the hook's regex).

``FILES_REGEX`` is the same decision as a Python regex for the pre-commit hook;
``tests/static/test_detect.py`` keeps the two in step.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from imagelint.lazyre import lazy_pattern

DOCKERFILE = "dockerfile"
MANIFEST = "manifest"
APPCONFIG = "appconfig"
SCRIPT = "script"
COMPOSE = "compose"
KINDS = (DOCKERFILE, MANIFEST, APPCONFIG, SCRIPT, COMPOSE)

_DOCKERFILE_NAME = lazy_pattern(r"^(?:(?:Dockerfile|Containerfile)(?:[._-].+)?|.+\.(?:Dockerfile|dockerfile|Containerfile))$")
_YAML_NAME = lazy_pattern(r"\.(?:ya?ml)$", re.IGNORECASE)
_JSON_NAME = lazy_pattern(r"\.json$", re.IGNORECASE)  # JSON is YAML: `kubectl get -o json`, generated manifests
_SCRIPT_NAME = lazy_pattern(r"\.(?:sh|bash|py)$")  # Python: torch.cuda.set_device(N), "cuda:N", os.environ[...]
_CONFIG_NAME = lazy_pattern(r"\.(?:txt|cfg|ini|conf)$")
_SHEBANG = lazy_pattern(rb"^#!\s*(?:/usr)?/bin/(?:env\s+)?(?:ba|da|k|z)?sh\b")
# DeepStream app config groups and the nvinfer [property] group (nvidia-facts §9).
# The two DeepStream patterns stay strings, compiled (and cached by ``re``) on first use:
# a Dockerfile is decided by its name, and the hook should not compile them at start-up.
_DEEPSTREAM_GROUP = (
    r"(?m)^\s*\[(?:application|property|streammux|primary-gie|secondary-gie\d*|tracker|osd|tiled-display|"
    r"source\d+|sink\d+|dewarper|pre-process|message-broker|tests)\]\s*$"
)
# DeepStream 6+ also takes YAML app/nvinfer configs: the same groups as top-level keys.
_DEEPSTREAM_YAML_KEY = (
    r"(?m)^(?:application|property|streammux|primary-gie|secondary-gie\d*|tracker|osd|tiled-display|source\d+|sink\d+):\s*$"
)

# DeepStream's nvinferserver (Triton) plugin config: protobuf text with an infer_config block.
_NVINFERSERVER = r"(?m)^\s*infer_config\s*\{"

# For .pre-commit-hooks.yaml: names that may hold a kind (content decides for YAML/.txt).
FILES_REGEX = (
    r"(^|/)((Dockerfile|Containerfile)([._-][^/]*)?|[^/]+\.(Dockerfile|dockerfile|Containerfile))$"
    r"|\.(ya?ml|YA?ML|json|JSON|sh|bash|py)$"
    r"|(^|/)[^/]*(deepstream|nvinfer|infer|pgie|sgie|ds|tracker|config)[^/]*\.(txt|cfg|ini|conf)$"
)


def kind_by_name(path: str) -> str | None:
    name = PurePath(path).name
    if _DOCKERFILE_NAME.match(name):
        return DOCKERFILE
    if _YAML_NAME.search(name) or _JSON_NAME.search(name):
        return MANIFEST
    if _SCRIPT_NAME.search(name):
        return SCRIPT
    if _CONFIG_NAME.search(name):
        return APPCONFIG
    return None


def detect_kind(path: str, head: bytes) -> str | None:
    """The kind of ``path`` given its first bytes (a few KB are enough)."""
    by_name = kind_by_name(path)
    if by_name in (DOCKERFILE, SCRIPT):
        return by_name  # decided by name; no need to import the YAML machinery (hook start-up)
    from imagelint.static.kubernetes import looks_like_kubernetes

    text = head.decode("utf-8", "replace")
    if by_name == MANIFEST:
        if looks_like_kubernetes(text):
            return MANIFEST
        if _JSON_NAME.search(path):
            return None
        from imagelint.static.compose import looks_like_compose

        if looks_like_compose(path, text):
            return COMPOSE
        return APPCONFIG if re.search(_DEEPSTREAM_YAML_KEY, text) else None
    if by_name == APPCONFIG:
        return APPCONFIG if re.search(_DEEPSTREAM_GROUP, text) or re.search(_NVINFERSERVER, text) else None
    # No telling name: sniff the content.
    if _SHEBANG.match(head):
        return SCRIPT
    if re.search(r"^\s*FROM\s+\S+", text, re.MULTILINE | re.IGNORECASE) and not looks_like_kubernetes(text):
        first = next((ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")), "")
        if first.upper().startswith(("FROM", "ARG")):
            return DOCKERFILE
    if looks_like_kubernetes(text):
        return MANIFEST
    if re.search(_DEEPSTREAM_GROUP, text):
        return APPCONFIG
    return None


def unread_reason(path: str, head: bytes) -> str:
    """Why a file is not read, and what would make it readable (one line, for the skip note)."""
    name = PurePath(path).name
    if name.endswith(".pbtxt"):
        return "a Triton model configuration (protobuf text), not a DeepStream config; nothing to lint"
    if _YAML_NAME.search(name):
        if re.match(r"^values[.-]", name) or name == "Chart.yaml":
            return "Helm chart values/metadata, not Kubernetes objects; lint the rendered chart (helm template ... | imagelint lint -)"
        return ("YAML that is neither a Kubernetes object (no apiVersion/kind) nor a DeepStream config "
                "(no [property]/application groups)")
    if _CONFIG_NAME.search(name):
        return "no DeepStream app/nvinfer groups ([application], [property], [primary-gie]...) found"
    if _JSON_NAME.search(name):
        return "JSON that holds no Kubernetes object (no apiVersion/kind)"
    return "not a Dockerfile, Kubernetes manifest, DeepStream config or script"
