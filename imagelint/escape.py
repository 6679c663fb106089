"""Escaping of text that came from an image, a registry or a file, for every output format.

One home for the rule of each format, so no report has its own idea of what is safe:

* ``printable`` (text, ``inspect``, error lines): C0/C1 control characters, DEL, and the
  bidirectional overrides that reorder what a reviewer sees, and lone surrogates, are shown
  as ``\\xNN`` / ``\\uNNNN``; a newline in a value never starts a new output line, so nothing an image
  says can put ``::stop-commands::`` or ``::error`` at the start of a line of a CI log,
  or send a terminal an OSC/CSI sequence (title, clipboard, hyperlinks).
* ``guard_line``: a line that would still begin with ``::`` (a subject or path chosen by
  the repository) gets its first ``:`` escaped, so the Actions runner never reads a
  workflow command in a report that is not the ``github`` format.
* ``github_data`` / ``github_property``: the runner's own escapes (actions/toolkit
  ``command.ts``), after ``printable``.
* ``markdown_cell``: a GitHub-flavoured Markdown table cell: no line breaks, every character
  that means something in a cell backslash-escaped (no pipes, links, images, HTML or mentions).
* ``xml_text``: characters XML 1.0 cannot hold (most C0 controls, lone surrogates,
  U+FFFE/U+FFFF) shown as ``\\xNN`` so a JUnit file stays well-formed.
* ``uri_reference``: a relative path as an RFC 3986 URI reference (SARIF
  ``artifactLocation.uri``): ``%``, ``#``, ``?``, spaces and non-ASCII percent-encoded.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from imagelint.lazyre import lazy_pattern

# C0 (but tab), DEL, C1; line and paragraph separators; bidi embeddings/overrides/isolates;
# lone surrogates (a JSON string may carry one; no output encoding can).
_UNPRINTABLE = lazy_pattern("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escape_char(m: re.Match[str]) -> str:
    c = m.group(0)
    if c in _NAMED:
        return _NAMED[c]
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` as one line of plain characters (tabs kept)."""
    return _UNPRINTABLE.sub(_escape_char, text)


def guard_line(line: str) -> str:
    """``line``, with a leading ``::`` (after any indentation) defused."""
    stripped = line.lstrip()
    if stripped.startswith("::"):
        indent = line[: len(line) - len(stripped)]
        return f"{indent}\\x3a{stripped[1:]}"
    return line


def printable_lines(lines: list[str]) -> str:
    """Lines built from untrusted values, each made printable and guarded, joined by newlines."""
    return "\n".join(guard_line(printable(line)) for line in lines)


def github_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF as the runner expects, other controls escaped."""
    text = _UNPRINTABLE.sub(lambda m: m.group(0) if m.group(0) in "\r\n" else _escape_char(m), text)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """A workflow command's property value (``file=``, ``title=``): also ``:`` and ``,``."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


# Every character with a meaning inside a GFM table cell: emphasis, code, links and images,
# raw HTML and entities, pipes, strikethrough, references and mentions. Plain ``- . : / , =``
# stay as they are, so refs and paths read as themselves in the raw file too.
_MD_PUNCTUATION = lazy_pattern(r"([\\`*_\[\]<>|~!&#{}()+@])")


def markdown_cell(text: str) -> str:
    """``text`` as the content of one GitHub Markdown table cell."""
    return _MD_PUNCTUATION.sub(r"\\\1", printable(text))


_XML_INVALID = lazy_pattern("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` with only characters XML 1.0 allows (ElementTree escapes ``<&>"`` itself)."""
    return _XML_INVALID.sub(_escape_char, text)


def uri_reference(path: str) -> str:
    """A relative path as a URI reference: every character outside RFC 3986's unreserved set
    and ``/`` percent-encoded (UTF-8), so ``%``, ``#``, ``?``, ``:`` and spaces survive."""
    try:  # a tar name's undecodable bytes come back as the bytes they were
        raw = path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = path.encode("utf-8", "backslashreplace")
    return quote(raw, safe="/")
