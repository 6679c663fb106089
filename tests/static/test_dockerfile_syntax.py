"""What ``docker build`` refuses is a ``file:line`` error with exit 2 (BuildKit's parser and
instructions/parse.go), not a file linted as if it built; what it accepts is never refused."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from imagelint.cli import app
from imagelint.errors import ConfigError
from imagelint.static.dockerfile import parse_dockerfile

REFUSED = [
    # (Dockerfile, line, fragment of the reason)
    ("FROM Apache Spark 3.4.1\nRUN echo hi\n", 1, "one or three arguments"),
    ("FROM ubuntu:22.04 builder\n", 1, "one or three arguments"),
    ("FROM ubuntu:22.04 AS 1st\n", 1, "invalid name for build stage"),
    ("FROM ubuntu:22.04 AS ${NAME}\n", 1, "invalid name for build stage"),
    ("FROM --plattform=linux/amd64 ubuntu:22.04\n", 1, "unknown flag: --plattform"),
    ("FROM --platform ubuntu:22.04\n", 1, "missing a value on flag: --platform"),
    ("FROM ubuntu:22.04\nRUN apt-get update && \\\n    apt-get install -y curl\n    rm -rf /var/lib/apt/lists/*\n", 4,
     "unknown instruction: 'rm'"),
    ("FROM ubuntu:22.04\nCOPYY app /app\n", 2, "unknown instruction: 'COPYY'"),
    ("RUN echo hi\nFROM ubuntu:22.04\n", 1, "no build stage"),
    ("ARG BASE=ubuntu:22.04\n", 1, "no stages to build"),
    ("# only a comment\n\n", 1, "no instructions"),
    ("FROM ubuntu:22.04\nENV PYTHONUNBUFFERED\n", 2, "must have two arguments"),
    ("FROM ubuntu:22.04\nENV A=1 B\n", 2, "can't find = in 'B'"),
    ("FROM ubuntu:22.04\nENV A=1 # set A\n", 2, "can't find = in '#'"),
    ("FROM ubuntu:22.04\nLABEL =x\n", 2, "names can not be blank"),
    ("FROM ubuntu:22.04\nARG =x\n", 2, "ARG names can not be blank"),
    ("FROM ubuntu:22.04\nCOPY app.py\n", 2, "COPY requires at least two arguments"),
    ("FROM ubuntu:22.04\nADD --chown=1000 app.tar.gz\n", 2, "ADD requires at least two arguments"),
    ("FROM ubuntu:22.04\nCOPY --form=build /app /app\n", 2, "unknown flag: --form"),
    ("FROM ubuntu:22.04\nRUN --mount type=cache,target=/root/.cache pip install x\n", 2, "missing a value on flag: --mount"),
    ("FROM ubuntu:22.04\nCOPY --link=yes a /b\n", 2, "expecting boolean value"),
    ("FROM ubuntu:22.04\nWORKDIR\n", 2, "WORKDIR needs a directory"),
    ("FROM ubuntu:22.04\nEXPOSE\n", 2, "EXPOSE needs a port"),
    ("FROM ubuntu:22.04\nSHELL /bin/bash -c\n", 2, "JSON form"),
    ("FROM ubuntu:22.04\nHEALTHCHECK NONE --interval=5s\n", 2, "takes no arguments"),
    ("FROM ubuntu:22.04\nHEALTHCHECK curl -f http://localhost/\n", 2, "Unknown type 'CURL' in HEALTHCHECK"),
    ("FROM ubuntu:22.04\nHEALTHCHECK CMD\n", 2, "Missing command after HEALTHCHECK CMD"),
    ("FROM ubuntu:22.04\nONBUILD FROM alpine\n", 2, "isn't allowed as an ONBUILD trigger"),
    ("FROM ubuntu:22.04\nONBUILD ONBUILD RUN x\n", 2, "Chaining ONBUILD"),
    ("# escape=/\nFROM ubuntu:22.04\n", 1, "invalid escape token"),
    ("FROM ubuntu:22.04\nRUN <<EOF\necho never ends\n", 2, "unterminated heredoc"),
]


@pytest.mark.parametrize(("text", "line", "why"), REFUSED)
def test_what_docker_build_refuses_is_a_file_line_error(text: str, line: int, why: str) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_dockerfile(text, "app/Dockerfile")
    assert exc.value.exit_code == 2
    assert f"app/Dockerfile:{line}:" in exc.value.message and why in exc.value.message, exc.value.message


VALID = """\
# syntax=docker/dockerfile:1.7
# check=skip=StageNameCasing
ARG CUDA=12.4.1
ARG BASE=nvidia/cuda:${CUDA}-runtime-ubuntu22.04
FROM --platform=$BUILDPLATFORM ${BASE} AS Build
ENV PATH /usr/local/bin:$PATH
ENV A=1 B="two words" C=x\\ y
LABEL maintainer "someone" org.opencontainers.image.title="app"
LABEL "com.example.vendor"="ACME"
maintainer someone@example.com
RUN --mount=type=cache,target=/root/.cache/pip --network=host \\
    # a comment inside a continuation
    pip install -r requirements.txt

RUN <<EOF bash
set -e
echo "FROM inside a heredoc is text"
EOF
RUN <<-EOT
\techo tabs stripped
\tEOT
COPY --from=build --chown=1000:1000 --chmod=755 --link --exclude=*.pyc --parents ./src /app/
COPY <<EOF /etc/app.conf
key = value
EOF
ADD --checksum=sha256:0123 --keep-git-dir=true --unpack=false https://example.com/a.tgz /opt/
ADD ["a b.txt", "/dest/"]
COPY ["app.py", "/app/"]
RUN
CMD
ENTRYPOINT ["python3", "-m", "app"]
CMD ["--serve"]
EXPOSE 8080/tcp 9090
VOLUME ["/data"]
VOLUME /cache /tmp/x
USER 1000:1000
WORKDIR /app
STOPSIGNAL SIGTERM
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --start-interval=1s --retries=3 CMD curl -f http://localhost/ || exit 1
HEALTHCHECK NONE
HEALTHCHECK --interval=5s --whatever NONE
ONBUILD COPY . /app
ONBUILD RUN <<EOF
echo later
EOF
RUN --device=nvidia.com/gpu=all --security=insecure nvidia-smi
RUN cat <<< "a here-string, not a heredoc"
RUN ["bash", "-c", "cat <<EOF"]
RUN echo "quoted <<EOF is text" && cat<<NOTAHEREDOC
from ubuntu:22.04 as final
copy --from=Build /app /app
"""


def test_valid_dockerfiles_are_never_refused() -> None:
    df = parse_dockerfile(VALID, "Dockerfile")
    assert [i.keyword for i in df.instructions][:5] == ["ARG", "ARG", "FROM", "ENV", "ENV"]
    backtick = "# escape=`\nFROM mcr.microsoft.com/windows/servercore:ltsc2022\nRUN dir `\n    c:\\\nCOPY . C:\\app\\\n"
    assert len(parse_dockerfile(backtick, "Dockerfile").instructions) == 3
    assert parse_dockerfile("\ufeffFROM ubuntu:22.04\n", "Dockerfile").instructions[0].keyword == "FROM"


def test_the_cli_exits_2_with_file_and_line_and_escapes_the_input(tmp_path, monkeypatch) -> None:
    (tmp_path / "Dockerfile").write_text("FROM ubuntu:22.04\n\x1b[31mRUNN echo\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["lint", "Dockerfile"])
    assert result.exit_code == 2
    assert "Dockerfile:2:" in result.output and "unknown instruction" in result.output
    assert "\x1b" not in result.output


def test_an_unrendered_dockerfile_template_is_skipped_with_the_reason(tmp_path, monkeypatch) -> None:
    (tmp_path / "Dockerfile.j2").write_text("FROM {{ base_image }}\nRUN pip install {{ packages | join(' ') }}\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["lint", "Dockerfile.j2"])
    assert result.exit_code == 0 and "template" in result.output and "skipped" in result.output
