"""The merged view of an image's layers: whiteouts applied, symlinks resolved in-root.

INTERFACE CONTRACT (the facts modules code against exactly this):

    fs = ImageFilesystem.from_extracts(extracts)   # list[LayerExtract] in layer order
    fs.entry(path) -> Entry | None        # no link resolution; None if absent/whited out
    fs.resolve(path) -> str | None        # follow symlinks (absolute ones are relative to
                                          # the image root, '..' clamps at '/'), loop-safe;
                                          # the final normalised path, or None if it
                                          # dangles/loops. Intermediate components too.
    fs.lookup(path) -> Entry | None       # entry(resolve(path)), hardlinks followed to target
    fs.read(path) -> bytes | None         # captured content of the resolved file
    fs.head(path) -> bytes | None         # captured head bytes of the resolved file
    fs.scan(path) -> Any | None           # scanner result of the resolved file
    fs.glob(pattern) -> list[Entry]       # visible entries whose own path matches (CaptureRule
                                          # glob syntax), sorted by path
    fs.entries() -> Iterator[Entry]       # every visible entry, sorted by path
    fs.listdir(path) -> list[str]         # names of visible recorded entries directly below
                                          # the resolved directory
    fs.aliases(path) -> list[str]         # recorded paths (incl. via directory symlinks
                                          # that were recorded) that resolve to ``path``
    fs.warnings -> tuple[str, ...]        # from the extracts and from merging

Paths are accepted with or without a leading '/', and returned without one.
Only what the CaptureSpec recorded is visible: this is not a full filesystem.
"""
