"""Build-time mistakes (IL701–IL705): what each rule must report, and what it must leave alone."""

from __future__ import annotations

from tests.static.test_real_shapes import found, lint


def rules(tmp_path, dockerfile: str) -> set[tuple[str, str, int]]:
    run = lint(tmp_path, {"Dockerfile": dockerfile})
    return {(f.rule, f.severity, f.location.line) for r in run.results for f in r.findings if f.rule.startswith("IL7")}


def test_gpu_queries_in_run_and_the_ones_that_are_not_reported(tmp_path):
    got = rules(tmp_path, """\
        FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
        RUN nvidia-smi
        RUN /usr/local/cuda/extras/demo_suite/deviceQuery
        RUN nvidia-smi || echo "no GPU here"
        RUN --device=nvidia.com/gpu=all nvidia-smi
        RUN python3 -c 'import torch, sys; torch.cuda.is_available() or sys.exit(1)'
        RUN python3 -c 'import torch; print(torch.cuda.is_available())'
        RUN pip install nvidia-smi-exporter-docs && echo nvidia-smi-like
        """)
    assert got == {("IL701", "warning", 2), ("IL701", "warning", 3), ("IL701", "info", 4),
                   ("IL701", "warning", 6), ("IL701", "info", 7)}


def test_host_packages_only_in_the_final_stage_count(tmp_path):
    got = rules(tmp_path, """\
        FROM ubuntu:22.04 AS tools
        RUN apt-get install -y nvidia-container-toolkit
        FROM nvidia/cuda:12.4.1-base-ubuntu22.04
        RUN apt-get update && apt-get install -y --no-install-recommends cuda-drivers-550 libnvidia-container1
        RUN echo cuda-drivers is not installed here
        """)
    assert got == {("IL702", "error", 4), ("IL702", "warning", 4)}


def test_capabilities_all_written_in_the_file_not_inherited(tmp_path):
    assert ("IL703", "warning", 2) in rules(tmp_path, "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nENV NVIDIA_DRIVER_CAPABILITIES=all\n")
    assert not rules(tmp_path, "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nENV NVIDIA_DRIVER_CAPABILITIES=compute,utility\n")


def test_toolkit_on_devel_and_devel_as_final_stage(tmp_path):
    same = rules(tmp_path, "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN apt-get install -y cuda-toolkit-12-4\n")
    assert same == {("IL704", "warning", 2)}  # single stage: no IL705
    runtime_base = rules(tmp_path, "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nRUN apt-get install -y cuda-toolkit-12-4\n")
    assert not runtime_base  # the runtime image has no nvcc: installing the toolkit is how one gets it
    good = rules(tmp_path, """\
        FROM nvidia/cuda:12.4.1-devel-ubuntu22.04 AS build
        RUN make
        FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
        COPY --from=build /src/app /app
        """)
    assert not good
    run = lint(tmp_path, {"Dockerfile": "FROM pytorch/pytorch:2.5.0-cuda12.4-cudnn9-devel AS b\nFROM b\n"})
    assert [f[0] for f in found(run, "IL705")] == ["IL705"]


def test_nvidia_smi_in_a_script_a_step_only_writes_is_not_a_build_time_query(tmp_path):
    got = rules(tmp_path, """\
        FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
        RUN cat > /usr/local/bin/start.sh <<'EOF'
        #!/bin/bash
        nvidia-smi
        exec python3 serve.py
        EOF
        RUN echo 'nvidia-smi -L' > /check-gpu.sh && chmod +x /check-gpu.sh
        RUN printf '#!/bin/sh\\nnvidia-smi\\n' >> /etc/profile.d/gpu.sh; tee /opt/probe.sh <<EOF
        deviceQuery
        EOF
        COPY <<EOF /entrypoint.sh
        nvidia-smi
        EOF
        RUN <<EOF
        apt-get update
        nvidia-smi
        EOF
        RUN <<EOF bash
        set -e
        cat > /tmp/later.sh <<'INNER'
        nvidia-smi
        INNER
        echo "nvidia-smi" >> /tmp/later.sh
        deviceQuery
        EOF
        RUN cat <<EOF | sh
        nvidia-smi
        EOF
        RUN echo "GPUs: $(nvidia-smi -L)" > /build-gpus.txt
        """)
    # written (lines 2, 7, 8, 11) leave nothing; the RUN's own scripts (14, 18, 26) and a command
    # substitution echo runs (29) are queries at build time
    assert got == {("IL701", "warning", 14), ("IL701", "warning", 18), ("IL701", "warning", 26),
                   ("IL701", "warning", 29)}
