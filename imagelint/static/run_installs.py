"""What a Dockerfile's ``RUN`` lines install that matters to CUDA: evidence, driver libraries, stubs.

Package syntax, not NVIDIA facts (so code, like ``imagelint.facts.gpuindex``):

* pip: ``torch==2.3.1+cu121`` (a local version), ``--index-url``/``--extra-index-url
  …/whl/cu121`` (PyTorch's wheel indexes), ``nvidia-cuda-runtime-cu12==12.4.127`` (a pinned CUDA
  runtime wheel), ``cupy-cuda118`` (CuPy's per-release wheels; ``cupy-cuda12x`` names a major only
  and is not evidence) → CUDA evidence of source ``pip-wheel``;
* conda: ``pytorch-cuda=12.1``, ``cudatoolkit=11.8``, ``cuda-toolkit=12.4`` → ``package``;
* apt/dnf: ``cuda-toolkit-12-4``, ``cuda-runtime-12-4``, ``cuda-cudart-12-4``,
  ``cuda-libraries-12-4`` → ``package``; ``cuda-compat-12-4`` is the forward-compat package and
  is reported for what it is; ``libnvidia-compute-535`` / ``nvidia-driver-535`` bake the driver's
  user-space libraries into the image (IL201's anti-pattern);
* a stubs directory written into ``/etc/ld.so.conf.d`` (``echo …/stubs > /etc/ld.so.conf.d/x.conf``)
  puts the link-time ``libcuda.so`` stub on the loader path (IL202);
* the forward-compat package taken out again: ``apt-get purge/remove/autoremove cuda-compat-12-4``
  (or ``cuda-compat-*``), ``dnf/yum/microdnf remove``, ``dpkg -r/-P``, ``rpm -e``, or its directory
  deleted (``rm -rf /usr/local/cuda/compat``, ``/usr/local/cuda-12.4/compat``) →
  ``compat-removed`` (value X.Y, or "" for every release). A package named in a removal command is
  not an install.
"""

from __future__ import annotations

from dataclasses import dataclass

from imagelint.lazyre import lazy_pattern

_TORCH_LOCAL = lazy_pattern(r"(?<![\w-])torch(?:vision|audio)?==\d[\w.]*\+cu(\d{2,3})\b")
_WHL_INDEX = lazy_pattern(r"download\.pytorch\.org/whl/(?:nightly/|test/)?cu(\d{2,3})\b")
_NV_WHEEL = lazy_pattern(r"(?<![\w-])nvidia-cuda-runtime-cu1\d==(\d+\.\d+)(?:\.\d+)*")
_CUPY = lazy_pattern(r"(?<![\w-])cupy-cuda(1\d)(\d)(?![\dx])")
_CONDA = lazy_pattern(r"(?<![\w-])(?:pytorch-cuda|cudatoolkit|cuda-toolkit|cuda-version)\s*=+\s*(\d+\.\d+)")
_APT_CUDA = lazy_pattern(r"(?<![\w-])cuda-(?:toolkit|runtime|cudart|libraries|minimal-build)-(1\d)-(\d)(?![\w-])")
_APT_COMPAT = lazy_pattern(r"(?<![\w-])cuda-compat-(1\d)-(\d)(?![\w-])")
_DRIVER_PKG = lazy_pattern(r"(?<![\w-])(libnvidia-compute|libnvidia-gl|nvidia-driver|nvidia-utils|libnvidia-decode|"
                           r"libnvidia-encode|nvidia-compute-utils)-(\d{3})(?:-server)?(?![\w-])")
_STUBS_CONF = lazy_pattern(r"(/[\w./-]*/stubs)/?[\"']?\s*>>?\s*/etc/ld\.so\.conf\.d/[\w.-]+")
# A package-manager command that takes packages out (its whole simple command, up to a separator).
_REMOVE_COMMAND = lazy_pattern(
    r"(?<![\w-])(?:(?:apt-get|apt|aptitude)(?:\s+-\S+)*\s+(?:purge|remove|autoremove)"
    r"|(?:dnf|yum|microdnf|tdnf|zypper)(?:\s+-\S+)*\s+(?:remove|erase|rm)"
    r"|dpkg(?:\s+-\S+)*?\s+(?:-r|-P|--purge|--remove)|rpm(?:\s+-\S+)*?\s+-e\w*)(?![\w-])[^;&|\n]*")
_REMOVED_COMPAT = lazy_pattern(r"(?<![\w-])cuda-compat(?:-(1\d)-(\d+)(?![\w-])|-(1\d)-\*|-?\*|(?![\w-]))")
_RM_COMMAND = lazy_pattern(r"(?<![\w-])rm(?:\s+-\S+)+((?:\s+[^\s;&|]+)+)")
_COMPAT_DIR = lazy_pattern(r"^[\"']?/usr/local/cuda(?:-(\d+\.\d+)|-\*)?(/compat(?:/\S*)?)?/?[\"']?$")
_INSTALLERS = lazy_pattern(r"\b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip|conda|mamba|micromamba|apt-get|apt|dnf|yum|microdnf)\b")


@dataclass(frozen=True)
class RunInstall:
    """One thing a RUN line installs or writes: ``what`` is cuda / compat / compat-removed /
    driver-package / stubs-conf."""

    what: str
    value: str     # a CUDA major.minor, a driver branch, or a directory
    source: str    # evidence source: pip-wheel, package
    text: str      # the matched words


def _cu(digits: str) -> str:
    return f"{digits[:-1]}.{digits[-1]}"


def scan_run(text: str, executed: str | None = None) -> list[RunInstall]:
    """Everything of interest in one RUN instruction's text (heredoc bodies included). Removals are
    read in ``executed`` (``imagelint.static.run_script``: without text the step only writes into
    files) when given."""
    out: list[RunInstall] = []
    compat: list[tuple[int, RunInstall]] = []  # (where in the text, install or removal)
    removals = [m.span() for m in _REMOVE_COMMAND.finditer(text)] if "cuda-compat" in text else []
    runs = text if executed is None else executed
    for m in _REMOVE_COMMAND.finditer(runs) if "cuda-compat" in runs else ():
        at = text.find(m.group(0))  # the order of installs and removals is the full text's
        for p in _REMOVED_COMPAT.finditer(m.group(0)):
            version = f"{p.group(1)}.{p.group(2)}" if p.group(1) else ""
            compat.append((max(at, 0) + p.start(), RunInstall("compat-removed", version, "package",
                                                                           m.group(0).strip())))
    if _INSTALLERS.search(text):
        for m in _TORCH_LOCAL.finditer(text):
            out.append(RunInstall("cuda", _cu(m.group(1)), "pip-wheel", m.group(0)))
        for m in _WHL_INDEX.finditer(text):
            out.append(RunInstall("cuda", _cu(m.group(1)), "pip-wheel", m.group(0)))
        for m in _NV_WHEEL.finditer(text):
            out.append(RunInstall("cuda", m.group(1), "pip-wheel", m.group(0)))
        for m in _CUPY.finditer(text):
            out.append(RunInstall("cuda", f"{m.group(1)}.{m.group(2)}", "pip-wheel", m.group(0)))
        for m in _CONDA.finditer(text):
            out.append(RunInstall("cuda", m.group(1), "package", m.group(0)))
        for m in _APT_CUDA.finditer(text):
            out.append(RunInstall("cuda", f"{m.group(1)}.{m.group(2)}", "package", m.group(0)))
        for m in _APT_COMPAT.finditer(text):
            if not any(start <= m.start() < end for start, end in removals):
                compat.append((m.start(), RunInstall("compat", f"{m.group(1)}.{m.group(2)}", "package", m.group(0))))
        for m in _DRIVER_PKG.finditer(text):
            out.append(RunInstall("driver-package", m.group(2), "package", m.group(0)))
    for m in _RM_COMMAND.finditer(runs):
        for word in m.group(1).split():
            d = _COMPAT_DIR.match(word)
            if d and (d.group(2) or word.rstrip("/\"'").endswith(("/usr/local/cuda", "*"))):
                at = text.find(m.group(0))
                compat.append((max(at, 0), RunInstall("compat-removed", d.group(1) or "", "package", m.group(0).strip())))
    # In the order the step runs them: a purge then an install leaves the package, and the reverse not.
    out += [item for _, item in sorted(compat, key=lambda pair: pair[0])]
    for m in _STUBS_CONF.finditer(text):
        out.append(RunInstall("stubs-conf", m.group(1), "package", m.group(0)))
    return out
