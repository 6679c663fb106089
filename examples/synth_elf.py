"""Synthesize tiny, inert ELF shared objects for the example image and the tests.

No NVIDIA code is copied: a file is an ELF header, optional program headers, an
optional note (e.g. a ``.note.cuda.fwd_compatibility`` with a JSON descriptor),
optional zero padding (to make a "large" library), a section name table and a
section header table. Byte-identical for identical arguments.
"""

from __future__ import annotations

import json
import struct

EM_X86_64 = 62
EM_AARCH64 = 183


def note_record(owner: str, desc: bytes, ntype: int = 1, endian: str = "<") -> bytes:
    name = owner.encode() + b"\x00"
    pad = lambda b: b + b"\x00" * (-len(b) % 4)  # noqa: E731
    return struct.pack(endian + "III", len(name), len(desc), ntype) + pad(name) + pad(desc)


def fwd_compat_desc(cuda_version: str, drivers: list[int] | None = None, devices: list[int] | None = None) -> bytes:
    doc: dict = {"Format": 1, "CUDA Version": cuda_version}
    if drivers is not None:
        doc["Driver"] = drivers
    if devices is not None:
        doc["Device"] = devices
    return json.dumps(doc, separators=(",", ":")).encode()


def build_elf(
    note: bytes | None = None,
    note_section: str = ".note.cuda.fwd_compatibility",
    note_in_segment: bool = True,
    padding: int = 0,
    machine: int = EM_X86_64,
    elf32: bool = False,
    big_endian: bool = False,
    soname_text: bytes = b"",
) -> bytes:
    """An ELF ET_DYN file. ``note`` is raw note-record bytes (see ``note_record``).

    With ``note_in_segment`` a PT_NOTE program header covers the note; without,
    the note lives only in a (non-alloc) section, ``padding`` zero bytes after
    it, so only a reader that keeps notes as they pass can find it.
    """
    e = ">" if big_endian else "<"
    ehsize, phentsize, shentsize = (52, 32, 40) if elf32 else (64, 56, 64)
    phnum = 1 if (note is not None and note_in_segment) else 0
    body = bytearray()
    off = ehsize + phnum * phentsize
    note_off = off
    if note is not None:
        body += note
    body += soname_text
    body += b"\x00" * padding
    body += b"\x00" * (-len(body) % 8)
    shstr = b"\x00" + (note_section.encode() + b"\x00" if note is not None else b"") + b".shstrtab\x00"
    shstr_off = off + len(body)
    body += shstr + b"\x00" * (-len(shstr) % 8)
    shoff = off + len(body)
    sections = [struct.pack(e + ("IIIIIIIIII" if elf32 else "IIQQQQIIQQ"), *([0] * 10))]

    def shdr(name: int, sh_type: int, flags: int, offset: int, size: int) -> bytes:
        if elf32:
            return struct.pack(e + "IIIIIIIIII", name, sh_type, flags, 0, offset, size, 0, 0, 4, 0)
        return struct.pack(e + "IIQQQQIIQQ", name, sh_type, flags, 0, offset, size, 0, 0, 4, 0)

    if note is not None:
        sections.append(shdr(1, 7, 2 if note_in_segment else 0, note_off, len(note)))
    sections.append(shdr(shstr.index(b".shstrtab"), 3, 0, shstr_off, len(shstr)))
    shnum = len(sections)
    ident = b"\x7fELF" + bytes([1 if elf32 else 2, 2 if big_endian else 1, 1, 0]) + b"\x00" * 8
    if elf32:
        ehdr = ident + struct.pack(e + "HHIIIIIHHHHHH", 3, machine, 1, 0, ehsize if phnum else 0, shoff, 0,
                                   ehsize, phentsize, phnum, shentsize, shnum, shnum - 1)
    else:
        ehdr = ident + struct.pack(e + "HHIQQQIHHHHHH", 3, machine, 1, 0, ehsize if phnum else 0, shoff, 0,
                                   ehsize, phentsize, phnum, shentsize, shnum, shnum - 1)
    phdrs = b""
    if phnum:
        assert note is not None
        if elf32:
            phdrs = struct.pack(e + "IIIIIIII", 4, note_off, note_off, note_off, len(note), len(note), 4, 4)
        else:
            phdrs = struct.pack(e + "IIQQQQQQ", 4, 4, note_off, note_off, note_off, len(note), len(note), 4)
    return ehdr + phdrs + bytes(body) + b"".join(sections)


def compat_libcuda(cuda_version: str, drivers: list[int], devices: list[int] | None = None, **kw: object) -> bytes:
    """A stand-in compat ``libcuda.so.<driver>`` carrying the forward-compat note."""
    desc = fwd_compat_desc(cuda_version, drivers, devices)
    endian = ">" if kw.get("big_endian") else "<"
    return build_elf(note_record("NVIDIA Corporation", desc, endian=endian), **kw)  # type: ignore[arg-type]
