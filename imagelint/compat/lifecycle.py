"""Where a data-centre driver branch stands on a given day (NVIDIA's "Supported Drivers and CUDA
Toolkit Versions": the branches it lists, each with an end-of-life date; "all other previous
driver branches not listed ... are end of life").

One ladder for every branch, used by IL503 and ``imagelint drivers`` alike:

* ``supported``: listed, and its end of life is today or later;
* ``past-eol``: listed with an end of life before today, or older than the newest listed
  branch and not listed at all (R525, R550, R590 are judged as R535 is once June 2026 passed);
* ``unknown``: newer than every branch the matrix lists (a newer matrix may know it).

Advice names only ``supported`` branches, and only those that drive the pool's GPUs.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

SUPPORTED = "supported"
PAST_EOL = "past-eol"
UNKNOWN_BRANCH = "unknown"


@dataclass(frozen=True)
class BranchStatus:
    """A branch's standing on ``day``."""

    branch: int
    status: str                  # SUPPORTED | PAST_EOL | UNKNOWN_BRANCH
    designation: str | None      # Long Term Support Branch / Production Branch / New Feature Branch
    eol: str | None              # "June 2026" as NVIDIA writes it
    eol_date: _dt.date | None
    listed: bool                 # NVIDIA's table names the branch
    source: str | None

    @property
    def supported_today(self) -> bool | None:
        return None if self.status == UNKNOWN_BRANCH else self.status == SUPPORTED

    def describe(self) -> str:
        """``R580 (Long Term Support Branch, until June 2028)``."""
        if self.designation and self.eol:
            return f"R{self.branch} ({self.designation}, until {self.eol})"
        return f"R{self.branch}"


def _date(text: object) -> _dt.date | None:
    try:
        return _dt.date.fromisoformat(str(text)) if text else None
    except ValueError:
        return None


def branch_status(branch: int, matrix: Matrix | None, day: _dt.date) -> BranchStatus:
    rows = {life.branch: life for life in matrix.driver_lifecycles()} if matrix is not None else {}
    row = rows.get(branch)
    if row is not None:
        eol = _date(row.eol_date)
        status = PAST_EOL if eol is not None and eol < day else SUPPORTED
        return BranchStatus(branch, status, row.designation, row.eol, eol, True, row.source)
    newest = max(rows) if rows else None
    status = UNKNOWN_BRANCH if newest is None or branch > newest else PAST_EOL
    source = next(iter(rows.values())).source if rows and status == PAST_EOL else None
    return BranchStatus(branch, status, None, None, None, False, source)


def supported_branches(matrix: Matrix | None, day: _dt.date, gpu_archs: tuple[str, ...] = ()) -> list[BranchStatus]:
    """The branches supported on ``day`` that drive every GPU architecture given, oldest first."""
    from imagelint.compat.pool import driver_supports_gpu

    out = []
    for life in matrix.driver_lifecycles() if matrix is not None else ():
        status = branch_status(life.branch, matrix, day)
        if status.status != SUPPORTED:
            continue
        if any(driver_supports_gpu(status.branch, arch, matrix).supported is False for arch in gpu_archs):
            continue
        out.append(status)
    return out


def driver_rows(matrix: Matrix, day: _dt.date, driver: str | None = None) -> list[dict[str, object]]:
    """``imagelint drivers``: every branch the matrix knows, its CUDA, lifecycle and standing on
    ``day``; only the branch of ``driver`` when it is a driver version (``535.104.05``, ``R570``),
    as ``--driver`` reads it."""
    from imagelint.deploytarget.values import DriverVersion

    wanted = DriverVersion.parse(driver) if driver else None
    rows = []
    for known in matrix.driver_branches():
        if wanted is not None and known.branch != wanted.branch:
            continue
        status = branch_status(known.branch, matrix, day)
        rows.append({
            "branch": status.branch, "max_cuda": known.max_cuda, "designation": status.designation,
            "eol": status.eol_date.isoformat() if status.eol_date else status.eol,
            "supported_today": {SUPPORTED: "yes", PAST_EOL: "no (past end of life)",
                                UNKNOWN_BRANCH: "unknown"}[status.status],
        })
    return rows


__all__ = ["PAST_EOL", "SUPPORTED", "UNKNOWN_BRANCH", "BranchStatus", "branch_status", "driver_rows",
           "supported_branches"]
