from __future__ import annotations

from pathlib import Path

import pytest

from imagelint.facts.gpuindex import INI, PYTHON, SHELL, YAML, find_capability_needs, find_gpu_settings, parse_indices
from tests.facts.helpers import facts_for
from tests.support.imagebuilder import File, ImageSpec, Symlink


@pytest.mark.parametrize("value,expected", [
    ("1", (1,)), ("0,2", (0, 2)), ("cuda:3", (3,)), ("all", ()), ("none", ()), ("void", ()), ("", ()),
    ("GPU-8e1a3b2c-1111-2222-3333-444455556666", ()), ("MIG-GPU-abc/1/0", ()),
])
def test_parse_indices(value: str, expected: tuple[int, ...]) -> None:
    assert parse_indices(value) == expected


@pytest.mark.parametrize("text,language,expected", [
    ("export CUDA_VISIBLE_DEVICES=1", SHELL, [("cuda-visible-devices", "1", (1,))]),
    ("CUDA_VISIBLE_DEVICES=0,1 python3 train.py", SHELL, [("cuda-visible-devices", "0,1", (0, 1))]),
    ('export NVIDIA_VISIBLE_DEVICES="GPU-abc"', SHELL, [("nvidia-visible-devices", "GPU-abc", ())]),
    ("deepstream-app --gpu-id 2 -c x.txt", SHELL, [("cli-flag", "2", (2,))]),
    ("python3 run.py --gpu_id=1", SHELL, [("cli-flag", "1", (1,))]),
    ("python3 run.py --device cuda:1", SHELL, [("cli-flag", "cuda:1", (1,))]),
    ("gpu-id=1", INI, [("gpu-id", "1", (1,))]),
    ("  gpu-id: 3", YAML, [("gpu-id", "3", (3,))]),
    ("torch.cuda.set_device(1)", PYTHON, [("code", "1", (1,))]),
    ("model.to('cuda:1')", PYTHON, [("code", "cuda:1", (1,))]),
    ("dev = torch.device('cuda', 2)", PYTHON, [("code", "2", (2,))]),
    ('os.environ["CUDA_VISIBLE_DEVICES"] = "3"', PYTHON, [("cuda-visible-devices", "3", (3,))]),
    ("# export CUDA_VISIBLE_DEVICES=1", SHELL, []),
    ("#gpu-id=1", INI, []),
    ("echo 'x # y' # CUDA_VISIBLE_DEVICES=1", SHELL, []),
    ("device = 'cuda'  # was cuda:1", PYTHON, []),
    ("gpu-id=1", SHELL, []),  # not INI: a shell line that says gpu-id=1 is not a DeepStream key
])
def test_find_gpu_settings(text: str, language: str, expected: list) -> None:
    assert [(m.kind, m.value, m.indices) for m in find_gpu_settings(text, language)] == expected


def test_capability_needs() -> None:
    assert find_capability_needs("exec deepstream-app -c cfg", SHELL) == [("video", 1)]
    assert find_capability_needs("ffmpeg -hwaccel cuda -i a -c:v h264_nvenc b", SHELL) == [("video", 1)]
    assert find_capability_needs("# deepstream-app", SHELL) == []
    assert find_capability_needs("x\nimport pyds\n", PYTHON) == [("video", 2)]


def _settings(facts):
    return [(s.kind, s.value, s.provenance.path or s.provenance.key, s.provenance.line, s.referenced)
            for s in facts.gpu.index_settings]


def test_follows_entrypoint_into_scripts_configs_and_path(tmp_path: Path) -> None:
    files = [
        File("docker-entrypoint.sh", b"#!/bin/sh\nset -e\n. /opt/app/env.sh\nexec \"$@\"\n", 0o755),
        File("opt/app/env.sh", b"# settings\nexport CUDA_VISIBLE_DEVICES=2\n"),
        File("usr/local/bin/serve", b"#!/bin/bash\ncd /srv/app\nAPP_CFG=/srv/app/ds.txt\nnohup deepstream-app -c $APP_CFG &\npython3 worker.py --device cuda:1\n", 0o755),
        File("srv/app/ds.txt", b"[application]\n\n[primary-gie]\ngpu-id=1\nconfig-file=models/pgie.txt\n"),
        File("srv/app/models/pgie.txt", b"[property]\ngpu-id=3\n"),
        File("srv/app/worker.py", b"import torch\ntorch.cuda.set_device(1)\n"),
        File("srv/app/unused.txt", b"[sink0]\ngpu-id=4\n"),
        Symlink("usr/bin/deepstream-app", "/opt/nvidia/deepstream/deepstream/bin/deepstream-app"),
    ]
    spec = ImageSpec(layers=[files], entrypoint=["/usr/bin/tini", "--", "/docker-entrypoint.sh"], cmd=["serve"],
                     env={"CUDA_VISIBLE_DEVICES": "0", "NVIDIA_VISIBLE_DEVICES": "all"})
    facts = facts_for(tmp_path, spec)
    got = _settings(facts)
    assert ("cuda-visible-devices", "0", "CUDA_VISIBLE_DEVICES", None, True) in got
    assert ("cuda-visible-devices", "2", "opt/app/env.sh", 2, True) in got
    assert ("cli-flag", "cuda:1", "usr/local/bin/serve", 5, True) in got
    assert ("gpu-id", "1", "srv/app/ds.txt", 4, True) in got
    assert ("gpu-id", "3", "srv/app/models/pgie.txt", 2, True) in got  # config-file= relative to the config
    assert ("code", "1", "srv/app/worker.py", 2, True) in got  # python3 worker.py after cd
    assert ("gpu-id", "4", "srv/app/unused.txt", 2, False) in got
    followed = [p.path for p in facts.gpu.followed_files]
    assert followed[:2] == ["docker-entrypoint.sh", "opt/app/env.sh"] and "usr/local/bin/serve" in followed
    assert [(c, p.path, p.line) for c, p in facts.gpu.needs_capabilities] == [("video", "usr/local/bin/serve", 4)]
    assert facts.gpu.visible_devices.value == "all"


def test_shell_form_cmd_and_bounded_loops(tmp_path: Path) -> None:
    files = [
        File("app/a.sh", b"#!/bin/sh\nsource /app/b.sh\nexport CUDA_VISIBLE_DEVICES=1\n"),
        File("app/b.sh", b"#!/bin/sh\nsource /app/a.sh\n"),  # a loop: followed once
    ]
    spec = ImageSpec(layers=[files], cmd=["/bin/sh", "-c", "CUDA_VISIBLE_DEVICES=3 sh /app/a.sh --gpu-id 5"])
    facts = facts_for(tmp_path, spec)
    got = _settings(facts)
    assert ("cuda-visible-devices", "3", "Cmd", None, True) in got
    assert ("cli-flag", "5", "Cmd", None, True) in got
    assert ("cuda-visible-devices", "1", "app/a.sh", 3, True) in got
    assert [p.path for p in facts.gpu.followed_files] == ["app/a.sh", "app/b.sh"]


def test_config_only_reads_argv_and_env(tmp_path: Path) -> None:
    spec = ImageSpec(layers=[[File("app/x.sh", b"export CUDA_VISIBLE_DEVICES=1\n")]],
                     entrypoint=["python3", "serve.py", "--gpu-id=2"], env={"NVIDIA_DRIVER_CAPABILITIES": "all"})
    facts = facts_for(tmp_path, spec, read_layers=False)
    assert facts.complete is False
    assert _settings(facts) == [("cli-flag", "2", "Entrypoint", None, True)]
    assert facts.gpu.driver_capabilities.value == "all" and facts.driver_libraries == ()
