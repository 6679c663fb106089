"""Start-up: the lint / pre-commit path never imports the network, daemon, cluster or decompression stacks."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli_probe import probe

# What `imagelint lint Dockerfile` must not pay for (each costs tens of ms to import).
HEAVY = ("requests", "urllib3", "docker", "kubernetes", "isal", "zstandard", "jsonschema", "cryptography", "jwt")


def _modules_after(args: list[str], env: dict[str, str] | None = None) -> tuple[int, set[str], str]:
    code, modules, out = probe(args, env)
    return code, {m.split(".")[0] for m in modules}, out


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
    """The checks here could pass vacuously; a command that does need docker (and requests) shows it."""
    code, modules, _ = _modules_after(["inspect", "docker:x/y:1"], {"DOCKER_HOST": f"unix://{tmp_path}/no.sock"})
    assert code == 3
    assert {"docker", "requests"} <= modules


def test_a_registry_reference_imports_neither_requests_nor_docker(tmp_path) -> None:
    """The registry client speaks HTTP through urllib3 (imagelint.sources.http), not requests or the
    docker SDK (port 9 on loopback: refused at once)."""
    code, modules, _ = _modules_after(["inspect", "registry:127.0.0.1:9/x/y:1", "--timeout", "1"])
    assert code == 3
    assert {"imagelint", "urllib3"} <= modules and not modules & {"requests", "docker"}, sorted(modules & {"requests", "docker"})


def test_a_layout_does_not_import_the_registry_or_daemon_clients(tmp_path) -> None:
    """Sources are imported one at a time: an OCI layout needs neither requests nor docker."""
    code, modules, _ = _modules_after(["inspect", f"oci-dir:{tmp_path / 'missing'}"])
    assert code in (2, 3)
    assert not modules & {"requests", "docker"}, sorted(modules & {"requests", "docker"})


# --- the lint path imports only what it uses (issue 6: start-up fast enough for a pre-commit hook) ---

_DOCKERFILE = 'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nENV NVIDIA_VISIBLE_DEVICES=all\nCOPY app /app\nCMD ["python3", "/app/run.py"]\n'

# Modules `imagelint lint Dockerfile` has no use for, by prefix (a prefix also names its submodules).
NOT_ON_THE_LINT_PATH = (
    "imagelint.sources",        # reaching images: only for --image
    "imagelint.core.inspect",
    "imagelint.cluster",
    "imagelint.layers.cache",   # the matrix loader has its own small cache
    "imagelint.layers.reader",
    "imagelint.layers.limits",
    "imagelint.layers.tarwalk",
    "imagelint.layers.decompress",
    "imagelint.facts.fatbin",   # IL401 needs it only for an image's GPU code or TORCH_CUDA_ARCH_LIST
    "imagelint.facts.capture",
    "imagelint.report.json",    # only the format asked for
    "imagelint.report.sarif",
    "imagelint.report.junit",
    "imagelint.report.github",
    "xml",                      # junit's ElementTree
    "tomli",                    # no config or target file, and the matrix JSON cache is warm
    "tomllib",
    "fractions",                # Kubernetes quantities, manifests only
    "decimal",
    "hashlib",
)


def _imported(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))


def _warm_lint(tmp_path: Path, *extra: str) -> tuple[int, set[str], str]:
    """``imagelint lint Dockerfile`` twice with a private cache; the second run's modules (the hook's steady state)."""
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(_DOCKERFILE)
    env = {"IMAGELINT_CACHE_DIR": str(tmp_path / "cache"), "GITHUB_ACTIONS": "", "GITHUB_STEP_SUMMARY": ""}
    probe(["lint", str(dockerfile), *extra], env)
    return probe(["lint", str(dockerfile), *extra], env)


def test_warm_lint_of_a_dockerfile_imports_only_what_it_uses(tmp_path) -> None:
    code, modules, out = _warm_lint(tmp_path)
    assert code == 0 and "IL303" in out, out  # lint really ran: info findings, fail-on error
    assert not _imported(modules, NOT_ON_THE_LINT_PATH), f"lint imported {_imported(modules, NOT_ON_THE_LINT_PATH)}"
    assert "imagelint.report.text" in modules and "imagelint.core.engine" in modules, "the probe sees imagelint's modules"


def test_the_layer_model_is_the_only_layers_module_on_the_lint_path(tmp_path) -> None:
    """``imagelint.facts.scripts`` (the command-line scanner lint shares with the image path) builds its capture
    rules from ``imagelint.layers.model`` at import; nothing else of ``imagelint.layers`` may come along."""
    _, modules, _ = _warm_lint(tmp_path)
    assert _imported(modules, ("imagelint.layers",)) <= ["imagelint.layers", "imagelint.layers.model"]


def test_the_import_probe_sees_what_a_format_or_a_cold_cache_needs(tmp_path) -> None:
    """The assertions above can fail: junit output does import xml, and a cold matrix cache does parse TOML."""
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(_DOCKERFILE)
    cold = {"IMAGELINT_CACHE_DIR": str(tmp_path / "cold"), "GITHUB_ACTIONS": "", "GITHUB_STEP_SUMMARY": ""}
    code, modules, out = probe(["lint", str(dockerfile), "--format", "junit"], cold)
    assert code == 0 and "<testsuites" in out
    assert {"imagelint.report.junit", "xml.etree.ElementTree", "tomli"} <= modules
    assert "imagelint.report.sarif" not in modules, "only the format asked for is imported"
    assert list((tmp_path / "cold" / "matrix").glob("*.ilm")), "the cold run filled the matrix cache"


def test_lint_with_an_image_builds_the_source_options_then(tmp_path) -> None:
    """``--image`` is the one lint path that reaches images: the deferred SourceOptions are built and used."""
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(_DOCKERFILE)
    code, modules, _ = probe(["lint", str(dockerfile), "--image", f"oci-dir:{tmp_path / 'missing'}"],
                              {"IMAGELINT_CACHE_DIR": str(tmp_path / "cache")})
    assert code in (2, 3)
    assert "imagelint.sources" in modules


def test_lint_still_checks_source_flags_at_once(tmp_path) -> None:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(_DOCKERFILE)
    for bad in (["--timeout", "0"], ["--max-layer-size", "lots"], ["--platform", "linux/amd64", "--all-platforms"]):
        code, modules, _ = probe(["lint", str(dockerfile), *bad], {"IMAGELINT_CACHE_DIR": str(tmp_path / "cache")})
        assert code == 2, bad
        assert "imagelint.sources" not in modules, bad


# --- a warm check reads its facts from the cache: nothing that reads layers is imported (issue 40) ---

NOT_ON_A_WARM_CHECK = (
    "imagelint.facts.capture",   # the capture is named (layers.model) and built only to read layers
    "imagelint.facts.fatbin",
    "imagelint.facts.driverlibs",
    "imagelint.facts.scripts",
    "imagelint.layers.reader",
    "imagelint.layers.tarwalk",
    "imagelint.layers.decompress",
)


def test_a_warm_check_imports_nothing_that_reads_layers(tmp_path) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "cuda-app"
    args = ["check", f"oci-dir:{example}", "--driver", "535.104.05", "--format", "json"]
    env = {"IMAGELINT_CACHE_DIR": str(tmp_path / "cache"), "GITHUB_ACTIONS": "", "GITHUB_STEP_SUMMARY": ""}
    cold_code, cold, _ = probe(args, env)
    assert set(NOT_ON_A_WARM_CHECK) <= cold, "the cold run read the layers (the probe sees those modules)"
    code, modules, out = probe(args, env)
    assert code == cold_code and '"findings"' in out, out
    assert not _imported(modules, NOT_ON_A_WARM_CHECK), f"a warm check imported {_imported(modules, NOT_ON_A_WARM_CHECK)}"
