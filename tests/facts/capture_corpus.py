"""The images whose facts must not change when the layer capture changes, and how they are recorded.

``tests/facts/data/capture_facts.json`` holds, per image, the complete encoded ``ImageFacts``
(GPU-index settings with file and line, followed scripts, capability needs, CUDA, loader,
driver libraries, warnings) and the findings of ``imagelint check`` against one target.
It was written by this module on the capture code that held every candidate text file whole
(first at cc9dc8a; rewritten on main at 824f58e, still without the streaming capture, because main's
loader facts, ``arch_lists`` and rule findings had changed meanwhile: the GPU facts had not), by
running main's tree with this file copied in::

    git archive main | tar -x -C /tmp/main && cp tests/facts/capture_corpus.py /tmp/main/tests/facts/
    cd /tmp/main && PYTHONPATH=/tmp/main python -P -m tests.facts.capture_corpus --write

Once the streaming capture is on main, a change to other facts or rules rewrites it with
``python -m tests.facts.capture_corpus --write`` in the tree itself (the diff shows what moved).

``test_capture_identity.py`` rebuilds every image and asserts the facts and findings are still
exactly these. The images are the shapes the script and config facts read: entrypoint chains
through shell scripts, DeepStream INI and YAML configs (``config-file=`` references), Python,
unreferenced configs (up to their cap), odd line breaks and encodings, binaries under broad
rules, files exactly at the old size caps, overwrites, whiteouts, links, the hostile-members
layer and ``examples/cuda-app``. Files *over* the old caps are left out on purpose: their facts
change (they were skipped in silence); tests/hostile/test_capture_limits.py covers them.
"""

from __future__ import annotations

import datetime
import json
import sys
import tempfile
from pathlib import Path
from typing import Callable

from tests.support.hostile_images import hostile_members
from tests.support.imagebuilder import File, Hardlink, ImageSpec, LayerSpec, Symlink, Whiteout, write_oci_layout

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).with_name("data") / "capture_facts.json"
CHECK_ARGS = ("--driver", "550.54.15", "--gpu", "T4", "--format", "json", "--fail-on", "never", "--no-cache")
KiB = 1024


def _layer(members: list, compression: str = "none") -> LayerSpec:
    return LayerSpec(members, compression)


def _padded(head: bytes, size: int, tail: bytes = b"") -> bytes:
    """``head`` + comment lines + ``tail``, exactly ``size`` bytes."""
    filler = size - len(head) - len(tail)
    line = b"# " + b"x" * 76 + b"\n"
    body = line * (filler // len(line))
    body += b"#" * (filler - len(body) - 1) + b"\n" if filler - len(body) > 0 else b""
    data = head + body + tail
    assert len(data) == size, (len(data), size)
    return data


def follow_chain() -> ImageSpec:
    files = [
        File("docker-entrypoint.sh", b"#!/bin/sh\nset -e\n. /opt/app/env.sh\nexec \"$@\"\n", 0o755),
        File("opt/app/env.sh", b"# settings\nexport CUDA_VISIBLE_DEVICES=2\n"),
        File("usr/local/bin/serve", b"#!/bin/bash\ncd /srv/app\nAPP_CFG=/srv/app/ds.txt\n"
             b"nohup deepstream-app -c $APP_CFG &\npython3 worker.py --device cuda:1\n", 0o755),
        File("srv/app/ds.txt", b"[application]\n\n[primary-gie]\ngpu-id=1\nconfig-file=models/pgie.txt\n"),
        File("srv/app/models/pgie.txt", b"[property]\ngpu-id=3\n"),
        File("srv/app/worker.py", b"import torch\ntorch.cuda.set_device(1)\n"),
        File("srv/app/unused.txt", b"[sink0]\ngpu-id=4\n"),
        Symlink("usr/bin/deepstream-app", "/opt/nvidia/deepstream/deepstream/bin/deepstream-app"),
    ]
    return ImageSpec(layers=[_layer(files)], entrypoint=["/usr/bin/tini", "--", "/docker-entrypoint.sh"],
                     cmd=["serve"], env={"CUDA_VISIBLE_DEVICES": "0", "NVIDIA_VISIBLE_DEVICES": "all"})


def shell_form() -> ImageSpec:
    files = [
        File("app/a.sh", b"#!/bin/sh\nsource /app/b.sh\nexport CUDA_VISIBLE_DEVICES=1\n"),
        File("app/b.sh", b"#!/bin/sh\nsource /app/a.sh\n"),
    ]
    return ImageSpec(layers=[_layer(files)], cmd=["/bin/sh", "-c", "CUDA_VISIBLE_DEVICES=3 sh /app/a.sh --gpu-id 5"])


def deepstream_yaml_and_python() -> ImageSpec:
    files = [
        File("opt/nvidia/deepstream/run.sh", b"#!/bin/bash\nexport NVIDIA_VISIBLE_DEVICES=GPU-8e1a3b2c\n"
             b"deepstream-app -c /opt/nvidia/deepstream/samples/app.yml\n"
             b"python3 /workspace/train.py --config /workspace/cfg.yaml --gpus 0,1\n", 0o755),
        File("opt/nvidia/deepstream/samples/app.yml", b"application:\n  enable-perf-measurement: 1\n"
             b"primary-gie:\n  enable: 1\n  gpu-id: 2\n  config-file: pgie.yml\n  # gpu-id: 9\n"),
        File("opt/nvidia/deepstream/samples/pgie.yml", b"property:\n  gpu_id: 1\n  ll-config-file: tracker.yml\n"),
        File("opt/nvidia/deepstream/samples/tracker.yml", b"BaseConfig:\n  minDetectorConfidence: 0\n"
             b"  CUDA_VISIBLE_DEVICES: 5\n"),
        File("workspace/train.py", b"#!/usr/bin/env python3\nimport os\nimport pyds\n"
             b"os.environ['CUDA_VISIBLE_DEVICES'] = '1'\nos.environ.setdefault(\"NVIDIA_VISIBLE_DEVICES\", \"2\")\n"
             b"dev = torch.device('cuda', 3)\nmodel.to(\"cuda:0\")  # was cuda:4\n"),
        File("workspace/cfg.yaml", b"trainer:\n  gpu-id: 0\n  devices: [0]\nenv:\n  CUDA_VISIBLE_DEVICES: \"0,1\"\n"),
        File("opt/nvidia/nvidia_entrypoint.sh", b"#!/bin/bash\nfor f in /opt/nvidia/entrypoint.d/*.sh; do . $f; done\n"
             b"exec \"$@\"\n", 0o755),
        File("opt/nvidia/entrypoint.d/10-banner.sh", b"echo banner\n"),
        File("opt/nvidia/entrypoint.d/50-gpu.sh", b"export CUDA_VISIBLE_DEVICES=${GPU:-1}\n"),
    ]
    return ImageSpec(layers=[_layer(files)], entrypoint=["/opt/nvidia/nvidia_entrypoint.sh"],
                     cmd=["/opt/nvidia/deepstream/run.sh"], working_dir="/workspace")


def line_breaks_and_encodings() -> ImageSpec:
    files = [
        File("entrypoint", b"#!/bin/sh\r\nexport CUDA_VISIBLE_DEVICES=1\r\n. /app/cr.sh\r\nexec /app/bin/start\r\n", 0o755),
        File("app/cr.sh", b"export A=1\rexport CUDA_VISIBLE_DEVICES=2\rsource /app/ff.sh\r"),
        File("app/ff.sh", b"x=1\x0cexport NVIDIA_VISIBLE_DEVICES=3\x0bexport CUDA_VISIBLE_DEVICES=4\n"
             + "y=2\u2028export CUDA_VISIBLE_DEVICES=5\u0085z=1\n".encode() + b"bad=\xff\xfe\nexport CUDA_VISIBLE_DEVICES=6\n"),
        File("app/bin/start", b"\xef\xbb\xbf#!/bin/sh\npython3 /app/serve.py -c /app/ds.conf\n", 0o755),
        File("app/serve.py", b"import torch\n\xff\xfe garbage\ntorch.cuda.set_device( 7 )\n"),
        File("app/ds.conf", b"[group]\r\ngpu-id = 1\r\n;gpu-id=8\r\n  gpu-id: 2 # yaml-ish\r\nconfig-file-path=\"sub/x.ini\"\r\n"),
        File("app/sub/x.ini", b"\n\n[a]\ngpu_id=3\n"),
        File("app/model.bin", b"\x00\x01\x02gpu-id=1\n[x]\nCUDA_VISIBLE_DEVICES=1\n" + bytes(range(256)) * 8),
        File("app/late-nul.txt", b"[x]\ngpu-id=1\n" + b"a" * 5000 + b"\x00tail\n"),
        File("app/data.json", b'{"CUDA_VISIBLE_DEVICES": "1", "k": "/app/ds.conf"}\n'),
        File("app/empty.txt", b""),
        File("app/no-newline.cfg", b"[x]\ngpu-id=6"),
        File("workspace/notes", b"gpu-id=1\nexport CUDA_VISIBLE_DEVICES=9\n"),
        File("usr/local/bin/py-tool", b"#!/usr/bin/python3\nimport os\nos.environ[\"CUDA_VISIBLE_DEVICES\"] = \"1\"\n", 0o755),
        File("usr/local/bin/txt-script.txt", b"#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=3\n", 0o755),
    ]
    return ImageSpec(layers=[_layer(files)], entrypoint=["/entrypoint"],
                     cmd=["--config=/workspace/notes", "/usr/local/bin/py-tool", "/usr/local/bin/txt-script.txt",
                          "/app/data.json", "/app/model.bin", "/app/late-nul.txt", "/app/no-newline.cfg",
                          "/app/empty.txt"])


def layers_links_whiteouts() -> ImageSpec:
    base = [
        File("usr/local/bin/start.sh", b"#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=1\n", 0o755),
        File("app/config.txt", b"[primary-gie]\ngpu-id=1\n"),
        File("app/removed.txt", b"[x]\ngpu-id=2\n"),
        File("app/gone/deep.txt", b"[x]\ngpu-id=3\n"),
        File("opt/tool/bin/run", b"#!/bin/sh\nexec deepstream-app -c /app/config.txt\n", 0o755),
        File("root/.bashrc", b"export CUDA_VISIBLE_DEVICES=0\n"),
        File("home/u/cfg.ini", b"[g]\ngpu-id=7\n"),
    ]
    top = [
        File("usr/local/bin/start.sh", b"#!/bin/sh\n. /usr/local/bin/hl.sh\nexport CUDA_VISIBLE_DEVICES=2\n"
             b"/opt/tool/bin/run\n", 0o755),
        File("opt/share/real.sh", b"export NVIDIA_VISIBLE_DEVICES=1\n"),
        Hardlink("usr/local/bin/hl.sh", "opt/share/real.sh"),
        Whiteout("app/removed.txt"),
        Whiteout("app/gone"),
        Symlink("app/link.txt", "/home/u/cfg.ini"),
        Symlink("entry", "usr/local/bin/start.sh"),
    ]
    return ImageSpec(layers=[_layer(base), _layer(top, "gzip")], entrypoint=["/entry"], cmd=["/app/link.txt"])


def size_caps() -> ImageSpec:
    """Files exactly at the old caps (256 KiB scripts, 128 KiB configs, 64 KiB app files): captured then and now."""
    files = [
        File("usr/local/bin/big-entry", _padded(b"#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=1\n", 256 * KiB,
                                                  b"export CUDA_VISIBLE_DEVICES=2\nexec /opt/x/cfg.txt\n"), 0o755),
        File("opt/x/cfg.txt", _padded(b"[primary-gie]\n", 128 * KiB, b"gpu-id=3\n")),
        File("opt/x/unref.conf", _padded(b"[a]\n", 128 * KiB, b"gpu-id=4\n")),
        File("app/start", _padded(b"#!/bin/sh\n", 64 * KiB, b"export CUDA_VISIBLE_DEVICES=5\n")),
        File("app/long-line.sh", b"export X=" + b"y" * (200 * KiB) + b"\nexport CUDA_VISIBLE_DEVICES=6\n"),
    ]
    return ImageSpec(layers=[_layer(files)], entrypoint=["/usr/local/bin/big-entry"],
                     cmd=["/app/start", "/app/long-line.sh"])


def text_heavy() -> ImageSpec:
    """A small NGC-like tree: many small text files, a few configs among them, > 64 unreferenced configs."""
    layers = []
    tree = []
    for i in range(400):
        ext = ("txt", "yaml", "cfg", "conf", "ini", "py", "md", "json")[i % 8]
        body = f"# file {i}\nkey_{i} = value {i}\n".encode()
        if i % 5 == 0 and ext in ("txt", "cfg", "conf", "ini"):
            body = f"[group-{i}]\ngpu-id={i % 4}\n".encode()
        elif i % 7 == 0:
            body += b"CUDA_VISIBLE_DEVICES=1 python run.py --gpu-id 2\n"
        tree.append(File(f"opt/framework/src/mod{i % 13}/file{i}.{ext}", body))
    layers.append(_layer(tree, "gzip"))
    site = []
    for i in range(60):
        site.append(File(f"usr/local/lib/python3.10/dist-packages/pkg{i}-1.0.dist-info/METADATA",
                         f"Metadata-Version: 2.1\nName: pkg{i}\nVersion: 1.0\n".encode()))
        site.append(File(f"usr/local/lib/python3.10/dist-packages/pkg{i}/__init__.py", b"import os\n"))
    site.append(File("usr/local/lib/python3.10/dist-packages/torch/version.py",
                     b"__version__ = '2.3.0'\ncuda = '12.4'\n"))
    layers.append(_layer(site, "zstd"))
    ws = [File(f"workspace/examples/ex{i}/README.md", f"Run `python ex{i}.py --gpus 1`\n".encode()) for i in range(30)]
    ws += [File(f"workspace/examples/ex{i}/ex{i}.py", b"import torch\nx.to('cuda:0')\n") for i in range(30)]
    ws.append(File("workspace/run_all.sh", b"#!/bin/bash\nfor e in examples/*; do python $e; done\n"
                   b"python examples/ex3/ex3.py\n"))
    layers.append(_layer(ws))
    return ImageSpec(layers=layers, entrypoint=["/bin/bash", "/workspace/run_all.sh"], working_dir="/workspace",
                     env={"PATH": "/usr/local/bin:/usr/bin:/bin"})


def hostile() -> ImageSpec:
    return ImageSpec(layers=[_layer(hostile_members(), "gzip")], entrypoint=["/usr/local/bin/suid-root"],
                     cmd=["/usr/share/bad-\ufffd\ufffd-name.sh"])


SPECS: dict[str, Callable[[], ImageSpec]] = {
    "follow-chain": follow_chain,
    "shell-form": shell_form,
    "deepstream-yaml-python": deepstream_yaml_and_python,
    "line-breaks-encodings": line_breaks_and_encodings,
    "layers-links-whiteouts": layers_links_whiteouts,
    "size-caps": size_caps,
    "text-heavy": text_heavy,
    "hostile-members": hostile,
}
EXAMPLE = "examples/cuda-app"


def reference_for(name: str, workdir: Path) -> str:
    if name == EXAMPLE:
        return f"oci-dir:{ROOT / EXAMPLE}"
    layout = write_oci_layout(workdir / name, {"latest": SPECS[name]().build()})
    return f"oci-dir:{layout}"


def record(reference: str) -> dict:
    """The facts (in-process, no cache) and the ``check`` findings of one image."""
    from imagelint.facts import codec
    from imagelint.facts.capture import CAPTURE_SPEC
    from imagelint.facts.collect import collect_image_facts
    from imagelint.layers.reader import read_image_filesystem
    from imagelint.sources import SourceOptions, open_images
    from tests.hostile.cli import run_main

    [image] = open_images(reference, SourceOptions(use_daemon=False))
    facts = collect_image_facts(image, read_image_filesystem(image, CAPTURE_SPEC))
    encoded = codec.encode(facts)
    encoded.pop("subject", None)  # the reference names a temporary directory
    run = run_main("check", reference, *CHECK_ARGS)
    assert run.returncode == 0, run.output
    results = json.loads(run.stdout)["results"]
    [result] = [r for r in results if r["image"]["kind"] == "image"]
    # The target's own findings (IL503) are a result of their own, once per run: recorded after the image's.
    about_target = [f for r in results if r["image"]["kind"] == "target" for f in r["findings"]]
    # IL503 judges driver branches on the run's date and says it: the recorded findings hold the
    # date as a placeholder, so the fixture stays true on later days.
    findings = json.loads(json.dumps(result["findings"] + about_target).replace(datetime.date.today().isoformat(), "<today>"))
    return {"facts": encoded, "findings": findings, "complete": result["complete"]}


def record_all() -> dict[str, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        return {name: record(reference_for(name, Path(tmp))) for name in [*SPECS, EXAMPLE]}


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m tests.facts.capture_corpus --write")
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(json.dumps(record_all(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {FIXTURE}")
