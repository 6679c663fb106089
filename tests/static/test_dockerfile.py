from __future__ import annotations

import pytest

from imagelint.errors import ConfigError
from imagelint.static.dockerfile import parse_dockerfile
from imagelint.static.dockerfile_facts import dockerfile_facts, split_stages


def facts_of(text: str, matrix=None):
    return dockerfile_facts(parse_dockerfile(text, "Dockerfile"), matrix)


def test_continuations_comments_and_lines() -> None:
    df = parse_dockerfile("FROM a\nENV A=1 \\\n    # a comment inside\n\n    B=2\nRUN echo \\\n  hi\n", "Dockerfile")
    env, run = df.instructions[1], df.instructions[2]
    assert (env.keyword, env.line, env.end_line) == ("ENV", 2, 5)
    assert env.args.split() == ["A=1", "B=2"]
    assert (run.line, run.end_line) == (6, 7)


def test_escape_directive_backtick() -> None:
    df = parse_dockerfile("# escape=`\nFROM a\nENV P=C:\\x `\n    Q=2\n", "Dockerfile")
    assert df.escape == "`"
    facts = dockerfile_facts(df)
    assert {e.name: e.value for e in facts.env} == {"P": "C:\\x", "Q": "2"}


def test_directive_only_at_top() -> None:
    df = parse_dockerfile("FROM a\n# escape=`\nENV A=1\n", "Dockerfile")
    assert df.escape == "\\" and "escape" not in df.directives


def test_heredoc_consumed_and_lines_kept() -> None:
    text = "FROM a\nRUN <<EOF\nexport CUDA_VISIBLE_DEVICES=1\nEOF\nCOPY <<-END /app/x.sh\n\techo hi\n\tEND\nENV Z=1\n"
    df = parse_dockerfile(text, "Dockerfile")
    kws = [(i.keyword, i.line, i.end_line) for i in df.instructions]
    assert kws == [("FROM", 1, 1), ("RUN", 2, 4), ("COPY", 5, 7), ("ENV", 8, 8)]
    assert df.instructions[1].heredocs[0].content == "export CUDA_VISIBLE_DEVICES=1\n"
    assert df.instructions[2].heredocs[0].content == "echo hi\n"


def test_exec_and_shell_forms_and_flags() -> None:
    df = parse_dockerfile('FROM --platform=$BUILDPLATFORM a AS b\nCMD ["x", "--gpu-id", "1"]\nENTRYPOINT run.sh -v\n', "D")
    assert df.instructions[0].flags == (("platform", "$BUILDPLATFORM"),)
    assert df.instructions[1].exec_form == ("x", "--gpu-id", "1")
    assert df.instructions[2].exec_form is None
    facts = dockerfile_facts(df)
    assert facts.entrypoint == ("/bin/sh", "-c", "run.sh -v")
    # ENTRYPOINT after CMD in the same stage keeps the CMD
    assert facts.cmd == ("x", "--gpu-id", "1")


def test_arg_in_from_with_defaults_and_stage_chain_inherits_env() -> None:
    text = (
        "ARG CUDA=12.4.1\nARG OS\n"
        "FROM nvidia/cuda:${CUDA}-runtime-ubuntu22.04${OS} AS base\n"
        "ENV NVIDIA_VISIBLE_DEVICES=0,1 LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs\n"
        "FROM python:3.12 AS other\nENV OTHER=1\n"
        "FROM base AS app\nARG CUDA\nENV V=$CUDA\n"
        "FROM app\nLABEL io.imagelint.ignore=\"IL303:known\"\n"
    )
    df = parse_dockerfile(text, "Dockerfile")
    _, stages = split_stages(df)
    assert [s.base for s in stages] == ["nvidia/cuda:12.4.1-runtime-ubuntu22.04", "python:3.12", "base", "app"]
    assert [s.parent for s in stages] == [None, None, 0, 2]
    facts = dockerfile_facts(df)
    env = {e.name: e for e in facts.env}
    assert "OTHER" not in env  # another stage's ENV does not reach the final image
    assert env["V"].value == "12.4.1"
    assert env["NVIDIA_VISIBLE_DEVICES"].provenance.line == 4
    assert facts.gpu.visible_devices.value == "0,1"
    assert facts.base.name == "nvidia/cuda:12.4.1-runtime-ubuntu22.04"
    assert facts.labels["io.imagelint.ignore"] == "IL303:known"
    assert [e.directory for e in facts.loader.ld_library_path] == ["/usr/local/cuda/lib64/stubs"]
    [ev] = [v for v in facts.cuda.versions if v.source == "base-image"]
    assert (ev.version, ev.precision, ev.provenance.line) == ("12.4.1", "patch", 3)


def test_ngc_base_resolves_through_matrix(matrix) -> None:
    facts = facts_of("FROM nvcr.io/nvidia/pytorch:24.05-py3\n", matrix)
    expected = matrix.ngc_image("nvidia/pytorch", "24.05-py3").cuda
    assert [(v.version, v.source) for v in facts.cuda.versions] == [(expected, "base-image")]
    assert facts_of("FROM nvcr.io/nvidia/pytorch:01.01-py3\n", matrix).cuda.versions == ()


def test_copy_of_driver_library_classified_by_destination() -> None:
    text = (
        "FROM ubuntu\nWORKDIR /opt\n"
        "COPY libcuda.so.535.104.05 /usr/lib/x86_64-linux-gnu/\n"
        "COPY --from=drv libnvidia-ml.so.1 libcuda.so.1 lib/\n"
        "ADD stubs/libcuda.so /usr/local/cuda/lib64/stubs/libcuda.so\n"
        "COPY app.py /app/\n"
    )
    libs = {l.path: l for l in facts_of(text).driver_libraries}
    real = libs["usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05"]
    assert (real.role, real.version, real.on_loader_path, real.provenance.line) == ("real", "535.104.05", True, 3)
    assert libs["opt/lib/libnvidia-ml.so.1"].on_loader_path is False
    assert libs["opt/lib/libcuda.so.1"].role == "real"
    assert libs["usr/local/cuda/lib64/stubs/libcuda.so"].role == "stub"
    assert len(libs) == 4


def test_inline_ignore_comment_attaches_to_next_instruction() -> None:
    df = parse_dockerfile("FROM a\n# imagelint ignore=IL302,IL301 the app needs it\nCMD x\n\n# imagelint ignore=IL1\n\nENV A=1\n", "D")
    assert dict(df.instructions[1].ignores) == {"IL302": "the app needs it", "IL301": "the app needs it"}
    assert dict(df.instructions[2].ignores) == {}  # a blank line separates the comment from ENV


def test_legacy_env_and_disable_require() -> None:
    facts = facts_of("FROM a\nENV NVIDIA_DISABLE_REQUIRE true\nENV NVIDIA_REQUIRE_CUDA=\"cuda>=12.4 brand=tesla,driver>=470\"\n")
    assert facts.cuda.disable_require.value == "true"
    assert [r.value for r in facts.cuda.requires] == ["cuda>=12.4 brand=tesla,driver>=470"]


def test_no_from_is_what_docker_build_refuses_not_a_crash() -> None:
    with pytest.raises(ConfigError) as exc:  # BuildKit: "no build stage in current context"
        facts_of("# just a comment\nRUN true\n")
    assert exc.value.exit_code == 2 and "Dockerfile:2" in exc.value.message and "no build stage" in exc.value.message


def test_binary_input_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as exc:
        parse_dockerfile("FROM a\x00", "bin/Dockerfile")
    assert exc.value.exit_code == 2 and "bin/Dockerfile" in exc.value.message


def test_capability_needs_only_when_the_file_sets_capabilities() -> None:
    unset = facts_of('FROM ubuntu\nCMD ["deepstream-app", "-c", "/app/cfg.txt"]\n')
    assert unset.gpu.needs_capabilities == ()  # the base image may set them: not comparable
    fixed = facts_of('FROM ubuntu\nENV NVIDIA_DRIVER_CAPABILITIES=compute,utility\nCMD ["deepstream-app", "-c", "/app/cfg.txt"]\n')
    [(capability, prov)] = fixed.gpu.needs_capabilities
    assert capability == "video" and prov.line == 3


def test_from_platform_pins_the_platform() -> None:
    assert str(facts_of("FROM --platform=linux/arm64 nvidia/cuda:12.4.1-base-ubuntu22.04\n").platform) == "linux/arm64"
    # $BUILDPLATFORM / $TARGETPLATFORM depend on the build: not pinned
    assert facts_of("FROM --platform=$BUILDPLATFORM ubuntu\n").platform is None
    assert facts_of("FROM ubuntu\n").platform is None
