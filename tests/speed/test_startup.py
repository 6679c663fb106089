"""Start-up: the lint / pre-commit path never imports the network, daemon, cluster or decompression stacks."""

from __future__ import annotations

import json
import subprocess
import sys

# What `imagelint lint Dockerfile` must not pay for (each costs tens of ms to import).
HEAVY = ("requests", "urllib3", "docker", "kubernetes", "isal", "zstandard", "jsonschema", "cryptography", "jwt")

_PROBE = r"""
import json, sys
sys.argv = ["imagelint", *json.loads(sys.argv[1])]
from imagelint.cli import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
print(json.dumps({"code": code, "modules": sorted({m.split(".")[0] for m in sys.modules})}), file=sys.stderr)
"""


def _modules_after(args: list[str]) -> tuple[int, set[str], str]:
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], capture_output=True, text=True, timeout=60)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], set(report["modules"]), done.stdout


def test_lint_of_a_dockerfile_imports_no_heavy_module(tmp_path) -> None:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nENV NVIDIA_VISIBLE_DEVICES=all\nCMD [\"python3\"]\n")
    code, modules, out = _modules_after(["lint", str(dockerfile)])
    assert code in (0, 1), out
    assert "IL303" in out or "visible" in out.lower(), "lint really ran and reported"
    assert not modules & set(HEAVY), f"lint imported {sorted(modules & set(HEAVY))}"


def test_help_imports_no_heavy_module() -> None:
    code, modules, out = _modules_after(["--help"])
    assert code == 0 and "lint" in out
    assert not modules & set(HEAVY), f"--help imported {sorted(modules & set(HEAVY))}"


def test_the_probe_can_see_a_heavy_import(tmp_path) -> None:
    """The check above could pass vacuously; a command that does need requests shows it."""
    # A registry reference needs requests (port 9 on loopback: refused at once).
    code, modules, _ = _modules_after(["inspect", "registry:127.0.0.1:9/x/y:1", "--timeout", "1"])
    assert code == 3
    assert "requests" in modules


def test_a_layout_does_not_import_the_registry_or_daemon_clients(tmp_path) -> None:
    """Sources are imported one at a time: an OCI layout needs neither requests nor docker."""
    code, modules, _ = _modules_after(["inspect", f"oci-dir:{tmp_path / 'missing'}"])
    assert code in (2, 3)
    assert not modules & {"requests", "docker"}, sorted(modules & {"requests", "docker"})
