"""Follow the entrypoint and cmd into the files they run, and collect GPU settings on the way.

Nothing is executed: the command line is tokenised, and files it names are read
from the image (what the capture spec kept). Followed: shell scripts (``exec``,
``source``/``.``, ``bash x.sh``, ``python3 x.py``, commands found through the
image's ``PATH``), and any argument that names a captured file (``deepstream-app
-c cfg.txt``, ``--config x``). DeepStream app configs are read as INI groups;
their ``config-file=`` keys (nvinfer configs) are followed relative to the
config's directory. Depth and count are bounded. Every setting found this way
is ``referenced=True``; app configs that nothing references are reported with
``referenced=False``.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

from imagelint.facts import gpuindex, names, textscan
from imagelint.facts.fsview import FilesystemView, file_provenance, norm
from imagelint.facts.model import EnvSetting, GpuFacts, GpuIndexSetting, Provenance
from imagelint.layers.model import CaptureRule
from imagelint.lazyre import lazy_pattern

# Scripts and app configs live anywhere; keep the spec fixed (image-independent) and bounded:
# shell scripts everywhere, and text files under the usual application roots. Every match is
# streamed through the text-facts scanner (imagelint.facts.textscan), which keeps the settings,
# references and script text these facts use, never the whole file.
_APP_ROOTS = ("app", "apps", "workspace", "srv", "src", "code", "models", "configs", "config", "home", "root", "opt", "usr/src")
_TEXT_EXTS = ("txt", "ini", "cfg", "conf", "yml", "yaml", "py")
_TEXT = textscan.TEXT_SCANNER
CAPTURE_RULES = (
    CaptureRule("**/*.sh", "scan", name=_TEXT),
    CaptureRule("**/*.bash", "scan", name=_TEXT),
    CaptureRule("*", "scan", name=_TEXT),  # /entrypoint, /run.py, /start...
    CaptureRule("usr/local/bin/*", "scan", name=_TEXT),
    CaptureRule("usr/local/sbin/*", "scan", name=_TEXT),
    CaptureRule("opt/*/bin/*", "scan", name=_TEXT),
    CaptureRule("opt/nvidia/*_entrypoint*", "scan", name=_TEXT),
    *(CaptureRule(f"{root}/**/*.{ext}", "scan", name=_TEXT) for root in _APP_ROOTS for ext in _TEXT_EXTS if not (root == "opt" and ext == "py")),
    *(CaptureRule(f"{root}/**/*", "scan", name=_TEXT) for root in ("app", "workspace", "srv")),
    CaptureRule("usr/bin/*", "record"),
    CaptureRule("usr/sbin/*", "record"),
    CaptureRule("bin/*", "record"),
    CaptureRule("sbin/*", "record"),
)
SCANNERS = textscan.SCANNERS

MAX_FILES = 32
MAX_DEPTH = 6
MAX_SETTINGS = 256
MAX_UNREFERENCED_CONFIGS = 64
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

_SHELLS = {"sh", "bash", "dash", "ash", "zsh", "ksh"}
_PY_RE = lazy_pattern(r"^python(\d+(\.\d+)?)?$")
# Programs that run the rest of their arguments as a command.
_WRAPPERS = {"exec", "nohup", "time", "env", "command", "builtin", "tini", "dumb-init", "catatonit", "sudo", "xargs", "stdbuf", "nice", "setsid", "taskset"}
_WRAPPERS_WITH_ARG = {"gosu", "su-exec", "chpst", "s6-setuidgid"}
_SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", "{", "}", "then", "do", "else", "if", "while", "until", "!"}
_ASSIGN = lazy_pattern(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_ALL_ARGS = {"$@", "${@}", "$*", "${*}"}
_VAR = lazy_pattern(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}?")


@dataclass
class _Walk:
    """One walk from the entrypoint/cmd through the image's scripts and configs: the files read so far,
    and the GPU settings, capability needs and warnings found on the way."""

    fs: FilesystemView
    env: dict[str, str]
    working_dir: str
    settings: list[GpuIndexSetting] = field(default_factory=list)
    followed: list[Provenance] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    needs: list[tuple[str, Provenance]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unread: list[tuple[str, Provenance]] = field(default_factory=list)  # followed files not read to the end

    # -- locating files -----------------------------------------------------------------

    def locate(self, word: str, cwd: str, use_path: bool = False) -> str | None:
        """The image path a command or argument names, if the image has it as a file."""
        if not word or word.startswith("-") or "$" in word or len(word) > 4096:
            return None
        candidates = []
        if word.startswith("/"):
            candidates.append(word)
        elif use_path and "/" not in word:
            candidates += [posixpath.join(d, word) for d in self.env.get("PATH", DEFAULT_PATH).split(":") if d.startswith("/")]
        else:
            candidates.append(posixpath.join("/" + (cwd or ""), word))
        for c in candidates:
            entry = self.fs.lookup(c)
            if entry is not None and entry.kind in ("file", "hardlink"):
                return c
        return None

    # -- following ----------------------------------------------------------------------

    def follow(self, path: str, depth: int, args: list[str] | None = None) -> None:
        resolved = self.fs.resolve(path)
        if resolved is None or resolved in self.seen:
            return
        if len(self.seen) >= MAX_FILES or depth > MAX_DEPTH:
            self.warnings.append(f"/{resolved}: not followed (limit of {MAX_FILES} files, depth {MAX_DEPTH})")
            return
        info = text_facts(self.fs, resolved)
        if info is None or not info["text"]:
            return  # a binary or a file the spec did not keep: nothing to read
        self.seen.add(resolved)
        self.followed.append(file_provenance(self.fs, resolved, path))
        note = textscan.unread_note(info)
        if note is not None:
            self.warnings.append(f"/{resolved}: {note}")
            self.unread.append((note, file_provenance(self.fs, resolved, path)))
        elif info.get("notes"):
            self.warnings += [f"/{resolved}: {n}" for n in info["notes"]]
        language = info.get("lang")
        directory = posixpath.dirname(resolved)
        self.record_facts(info, lambda line: file_provenance(self.fs, resolved, path, line), True)
        if language == gpuindex.INI or language == gpuindex.YAML:
            for ref in info.get("r", ()):
                target = self.locate(ref.strip("\"'"), directory)
                if target:
                    self.follow(target, depth + 1)
        elif language == gpuindex.SHELL and "sh" in info:
            self.follow_shell(info["sh"], depth, cwd=self.working_dir, args=args or [])
        # Python: settings are read above; imports are not followed (that would be the whole venv).

    def record_facts(self, info: dict, prov_at, referenced: bool) -> None:
        for kind, value, text, line in info.get("s", ()):
            if len(self.settings) >= MAX_SETTINGS:
                break
            self.settings.append(GpuIndexSetting(kind, value, gpuindex.parse_indices(value), text, prov_at(line), referenced))
        if referenced:
            for capability, line in info.get("n", ()):
                if not any(c == capability for c, _ in self.needs):
                    self.needs.append((capability, prov_at(line)))

    def follow_shell(self, text: str, depth: int, cwd: str, args: list[str] | None = None) -> None:
        local = dict(self.env)
        positional = list(args or [])
        for raw in text.splitlines():
            line = gpuindex.strip_comment(raw, gpuindex.SHELL).strip()
            if not line:
                continue
            tokens = []
            for t in _split(line, local):
                # "$@" is the script's own arguments: the cmd, for an entrypoint script.
                tokens += positional if t in _ALL_ARGS else [t]
            for command in _commands(tokens):
                while command and _ASSIGN.match(command[0]):
                    m = _ASSIGN.match(command[0])
                    assert m is not None
                    local[m.group(1)] = m.group(2).strip("\"'")
                    command = command[1:]
                if command and command[0] == "cd" and len(command) > 1:
                    cwd = norm(posixpath.join("/" + cwd, command[1]))
                    continue
                self.follow_command(command, depth, cwd)

    def follow_command(self, argv: list[str], depth: int, cwd: str) -> None:
        argv = _unwrap(argv)
        if not argv:
            return
        prog = posixpath.basename(argv[0])
        if prog in ("source", "."):
            target = self.locate(argv[1], cwd) if len(argv) > 1 else None
            if target:
                self.follow(target, depth + 1, argv[2:])
            return
        if prog in _SHELLS:
            if any(a.startswith("-") and "c" in a[1:] and not a.startswith("--") for a in argv[1:2]):
                return  # inline -c text is handled by the caller that owns it
            rest = argv[1:]
            while rest and rest[0].startswith("-"):
                rest = rest[1:]
            target = self.locate(rest[0], cwd) if rest else None
            if target:
                self.follow(target, depth + 1, rest[1:])
            return
        target = self.locate(argv[0], cwd, use_path=True)
        if target:
            self.follow(target, depth + 1, argv[1:])
        for arg in argv[1:]:
            value = arg.split("=", 1)[1] if arg.startswith("--") and "=" in arg else arg
            found = self.locate(value, cwd)
            if found:
                self.follow(found, depth + 1)


def _expand(word: str, env: dict[str, str]) -> str:
    return _VAR.sub(lambda m: env.get(m.group(1), m.group(2) or m.group(0)), word)


def _split(line: str, env: dict[str, str]) -> list[str]:
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        tokens = line.split()
    return [_expand(t, env) for t in tokens]


def _commands(tokens: list[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for t in tokens:
        if t in _SEPARATORS:
            out.append([])
        else:
            out[-1].append(t)
    return [c for c in out if c]


def _unwrap(argv: list[str]) -> list[str]:
    """Drop wrappers (exec, tini --, gosu user, env A=B...) in front of the real command."""
    while argv:
        prog = posixpath.basename(argv[0])
        if prog in _WRAPPERS:
            argv = argv[1:]
            while argv and (argv[0].startswith("-") or _ASSIGN.match(argv[0])):
                argv = argv[1:]
        elif prog in _WRAPPERS_WITH_ARG:
            argv = argv[2:]
        else:
            break
    return argv


def _inline_shell(command: Sequence[str]) -> str | None:
    """The script of ``sh -c "..."`` (also ``bash -ec``, ``/bin/sh -c``), if that is what argv is."""
    argv = _unwrap(list(command))
    if argv and posixpath.basename(argv[0]) in _SHELLS:
        for i, a in enumerate(argv[1:], 1):
            if a.startswith("-") and not a.startswith("--") and "c" in a[1:]:
                return argv[i + 1] if i + 1 < len(argv) else ""
    return None


def gpu_facts(
    env: tuple[EnvSetting, ...],
    entrypoint: tuple[str, ...] | None,
    cmd: tuple[str, ...] | None,
    working_dir: str,
    fs: FilesystemView | None,
    warnings: list[str],
    unread: list[tuple[str, Provenance]] | None = None,
) -> GpuFacts:
    """GPU facts from env, argv and the files the entrypoint reaches; followed files that were not
    read to the end are added to ``unread`` (note, file)."""
    by_name = {e.name: e for e in env}
    env_map = {e.name: e.value for e in env}
    settings: list[GpuIndexSetting] = []
    for name, kind in ((names.CUDA_VISIBLE_DEVICES, "cuda-visible-devices"), (names.VISIBLE_DEVICES, "nvidia-visible-devices")):
        e = by_name.get(name)
        if e is not None:
            settings.append(GpuIndexSetting(kind, e.value, gpuindex.parse_indices(e.value), f"{name}={e.value}", e.provenance))
    # Settings written on the command line itself, located by config field.
    for key, argv in (("Entrypoint", entrypoint), ("Cmd", cmd)):
        if argv:
            prov = Provenance(kind="config", key=key)
            inline = _inline_shell(argv)
            text = inline if inline is not None else " ".join(shlex.quote(a) for a in argv)
            for m in gpuindex.find_gpu_settings(text, gpuindex.SHELL):
                settings.append(GpuIndexSetting(m.kind, m.value, m.indices, m.text, prov))
    needs: list[tuple[str, Provenance]] = []
    followed: list[Provenance] = []
    if fs is not None:
        walk = _Walk(fs, env_map, norm(working_dir))
        # The container runs entrypoint + cmd as one argv (cmd alone without an entrypoint).
        command = list(entrypoint or ()) + list(cmd or ()) if entrypoint else list(cmd or ())
        inline = _inline_shell(command)
        if inline is not None:
            key = "Entrypoint" if entrypoint else "Cmd"
            for capability, _line in gpuindex.find_capability_needs(inline, gpuindex.SHELL):
                walk.needs.append((capability, Provenance(kind="config", key=key)))
            walk.follow_shell(inline, 0, walk.working_dir)
        elif command:
            for capability, _line in gpuindex.find_capability_needs(" ".join(command), gpuindex.SHELL):
                walk.needs.append((capability, Provenance(kind="config", key="Entrypoint" if entrypoint else "Cmd")))
            walk.follow_command(command, 0, walk.working_dir)
        settings += walk.settings
        needs, followed = walk.needs, walk.followed
        warnings += walk.warnings
        if unread is not None:
            unread += walk.unread
        settings += _unreferenced_configs(fs, walk.seen)
    return GpuFacts(
        visible_devices=by_name.get(names.VISIBLE_DEVICES),
        cuda_visible_devices=by_name.get(names.CUDA_VISIBLE_DEVICES),
        driver_capabilities=by_name.get(names.DRIVER_CAPABILITIES),
        index_settings=tuple(settings),
        followed_files=tuple(followed),
        needs_capabilities=tuple(needs),
    )


def _unreferenced_configs(fs: FilesystemView, seen: set[str]) -> list[GpuIndexSetting]:
    """gpu-id keys in INI-style app configs (a ``[group]`` line) that nothing references."""
    out: list[GpuIndexSetting] = []
    configs = 0
    for root in _APP_ROOTS:
        # One pass over the root, then extension by extension in path order: what globbing
        # ``{root}/**/*.{ext}`` for each extension gave, for a quarter of the regex runs.
        by_ext: dict[str, list] = {ext: [] for ext in textscan.INI_EXTS}
        for entry in fs.glob(f"{root}/**/*"):
            base = entry.path.rpartition("/")[2]
            ext = base.rpartition(".")[2] if "." in base else None
            if ext in by_ext:
                by_ext[ext].append(entry)
        for ext in textscan.INI_EXTS:
            for entry in by_ext[ext]:
                if entry.path in seen or configs >= MAX_UNREFERENCED_CONFIGS:
                    continue
                info = text_facts(fs, entry.path)
                if info is None or "u" not in info:
                    continue  # binary, not captured, or no [group] line and gpu-id together
                configs += 1
                for value, text, line in info["u"]:
                    out.append(GpuIndexSetting("gpu-id", value, gpuindex.parse_indices(value), text,
                                               file_provenance(fs, entry.path, line=line), referenced=False))
    return out


def text_facts(fs: FilesystemView, path: str) -> dict | None:
    """What the text-facts scanner kept of ``path`` (see imagelint.facts.textscan); None if not captured.

    A file captured whole by another module's rule (an ld.so.conf, a version.json) is scanned
    here the same way, since the walk follows any file an argument names.
    """
    found = fs.scan(path)
    if found is not None:
        return found if textscan.is_text_facts(found) else None  # an ELF or fatbin scan: not text
    data = fs.read(path)
    if data is None:
        return None
    resolved = fs.resolve(path) or path
    return textscan.scan_bytes(resolved, data)


def script_text(fs: FilesystemView, path: str) -> str | None:
    """A shell script's text as the capture kept it (up to 1 MiB), or None (not a script, not kept)."""
    info = text_facts(fs, path)
    return info.get("sh") if info is not None else None
