"""The decision: will the image's CUDA runtime work on a pool, and how (``judge_pool``).

Order of NVIDIA's rules (CUDA Compatibility guide: minor-version and forward compatibility;
release notes Table 3; data-centre driver docs; container-toolkit release notes):

1. the driver must drive the GPU at all (``driver_gpu_support``: Volta/Pascal/Maxwell end
   with R580, Blackwell starts with R570);
2. in legacy/csv mode a false ``NVIDIA_REQUIRE_*`` refuses the container before CUDA runs;
3. which libcuda is loaded: the image's compat libcuda when the image puts it on its loader
   path or the runtime does (``runtime``), else the host's;
4. a loaded compat libcuda works only on GPUs forward compatibility supports (else error
   804), on host branches its package supports (else error 803), and then runs CUDA up to
   its own version;
5. the host's libcuda runs a CUDA release natively from that release's floor, within its
   major through minor-version compatibility from the major's floor (11.x: 450.80.02, 12.x:
   525.60.13, 13.x: 580), and fails below that with "CUDA driver version is insufficient".
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from imagelint.compat.carried import (
    NGC_ENTRYPOINT,
    NgcCompat,
    ngc_compat,
    official_base_compat,
    removal_note,
)
from imagelint.compat.evidence import (
    GoverningCuda,
    compare,
    compat_libcudas,
    compat_on_loader_path,
    governing_cuda,
    major,
)
from imagelint.compat.pool import (
    DriverFacts,
    HostDriver,
    PoolGpu,
    driver_facts,
    driver_supports_gpu,
    forward_compat_class,
    host_driver,
    pool_gpus,
)
from imagelint.compat.runtime import Scenario, describe, runtime_injection, scenarios
from imagelint.compat.verdict import (
    COMPAT_HW,
    COMPAT_MISMATCH,
    FAILS,
    FORWARD,
    GPU_UNSUPPORTED,
    INSUFFICIENT,
    MINOR,
    NATIVE,
    REFUSED,
    UNKNOWN,
    Case,
    CompatUse,
    Verdict,
    merge_cases,
)
from imagelint.deploytarget import NodePool
from imagelint.facts.model import DriverLibrary, ImageFacts
from imagelint.untrusted import is_digits

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

# Who puts the compat libcuda first when the image's own loader path names it: the dynamic loader, in every
# runtime mode and toolkit release.
IMAGE_LOADS_COMPAT = "the image itself (its loader path: LD_LIBRARY_PATH / ld.so.conf)"


def judge_pool(facts: ImageFacts, pool: NodePool, matrix: Matrix | None) -> list[Verdict]:
    """One verdict per GPU model of the pool (one when it names none); [] when the image
    shows no CUDA runtime at all (nothing to judge: IL106 says when that is itself a gap)."""
    cuda = governing_cuda(facts, matrix)
    if cuda is None or matrix is None:
        return []
    gpus: list[PoolGpu | None] = list(pool_gpus(pool, matrix)) or [None]
    return [_Judge(facts, pool, matrix, cuda, gpu).verdict() for gpu in gpus]


class _Judge:
    """The inputs of one verdict, gathered once; methods are the steps of the decision."""

    def __init__(self, facts: ImageFacts, pool: NodePool, matrix: Matrix, cuda: GoverningCuda, gpu: PoolGpu | None):
        self.facts, self.pool, self.matrix, self.cuda, self.gpu = facts, pool, matrix, cuda, gpu
        self.notes: list[str] = []
        self.uncertain: list[str] = []
        self._newest_native: dict[str, str | None] = {}
        self.floor = matrix.driver_floor(cuda.version) if cuda.major_minor else None
        if self.floor is None:
            newest = matrix.newest_cuda_release()
            if cuda.major_minor is None:
                self.notes.append(
                    f"the image names only CUDA major {cuda.version} ({cuda.evidence.provenance.describe()}): "
                    f"its minor, and so its exact driver floor, is unknown")
            elif newest is not None and compare(cuda.version, newest) > 0:
                self.notes.append(
                    f"the matrix {matrix.version} is older than the image: CUDA {cuda.version} is newer than any "
                    f"release it knows (newest {newest}), so its driver floor could not be checked")
            else:
                self.notes.append(f"CUDA {cuda.version} is not a release the matrix {matrix.version} knows")
        if self.floor is not None and self.floor.uncertain:
            self.uncertain.append(f"the driver floor of CUDA {self.floor.release} ({self.floor.source})")
        self.host: HostDriver | None = host_driver(pool.driver)
        self.dfacts: DriverFacts | None = driver_facts(self.host, matrix) if self.host else None
        libs = compat_libcudas(facts)
        self.lib: DriverLibrary | None = libs[0] if libs else official_base_compat(facts, matrix)
        self.ngc: NgcCompat | None = ngc_compat(facts, matrix)
        if not libs and (gone := removal_note(facts, matrix)):
            self.notes.append(gone)

    # --- the verdict --------------------------------------------------------------------------
    def verdict(self) -> Verdict:
        self.situations: list[Scenario] = []
        cases = self._cases()
        merged = merge_cases(cases, self.situations or None, describe if self.situations else None)
        return Verdict(
            self.pool.name, self.gpu.label if self.gpu else None, self.cuda.version, self.cuda.evidence.source,
            self.floor.min_driver if self.floor else None, self.pool.driver, merged,
            tuple(dict.fromkeys(self.notes)), tuple(dict.fromkeys(self.uncertain)),
        )

    def _cases(self) -> list[Case]:
        if self.host is None:
            what = "the pool's driver version" if not self.pool.driver else f"a driver version ({self.pool.driver!r} is not one)"
            return [Case(UNKNOWN, f"cannot tell whether CUDA {self.cuda.version} runs: {what} is not known",
                         missing=(what,), fixes=("give the pool's driver (--driver 535.104.05 or the target file's driver)",))]
        self._driver_notes()
        unsupported = self._gpu_unsupported()
        if unsupported is not None:
            return [unsupported]
        if self.ngc is not None:
            return self._ngc_cases(self.ngc)
        self.situations = scenarios(self.pool, self.matrix)
        return [self._case(sc) for sc in self.situations]

    def _driver_notes(self) -> None:
        assert self.host is not None and self.dfacts is not None
        if self.host.bare:
            self.notes.append(
                f"driver given as branch R{self.host.branch} without a patch level: judged as the oldest "
                f"{self.host.branch}.x, so a floor inside the branch counts as not met"
            )
        if self.dfacts.beyond_known:
            self.notes.append(
                f"driver {self.host} is newer than any branch the matrix knows (newest R{self.dfacts.newest_known}): "
                "the CUDA version it reports and the GPUs it drives could not be checked"
            )
        elif self.dfacts.branch_uncertain:
            self.uncertain.append(f"the CUDA version branch R{self.host.branch} reports (uncertain matrix row)")

    def _gpu_unsupported(self) -> Case | None:
        assert self.host is not None
        if self.gpu is None:
            return None
        support = driver_supports_gpu(self.host.branch, self.gpu.arch, self.matrix)
        if support.supported is not False:
            return None
        if support.uncertain:
            self.uncertain.append(f"which branches drive {support.architecture} GPUs ({support.source})")
        if support.last_branch is not None and self.host.branch > support.last_branch:
            why = f"R{support.last_branch} is the last driver branch for {support.architecture} GPUs"
            fix = f"run the pool on an R{support.last_branch} driver (or move the workload to newer GPUs)"
        else:
            why = f"{support.architecture} GPUs need driver branch R{support.first_branch} or newer"
            fix = f"upgrade the pool's driver to R{support.first_branch} or newer"
        return Case(FAILS, f"driver {self.host.label} does not drive {self.gpu.label} (compute {self.gpu.arch}): {why}",
                    failure=GPU_UNSUPPORTED, fixes=(fix,))

    # --- an NGC container: its entrypoint decides -------------------------------------------------
    def _ngc_cases(self, ngc: NgcCompat) -> list[Case]:
        """NGC release notes: on data-centre GPUs the container runs on each listed branch from
        the listed driver on, its entrypoint enabling the compat package when the host driver is
        older than its CUDA needs; elsewhere the host driver alone decides. Notes that list no
        drivers and refer to CUDA Compatibility defer to the forward-compatibility table."""
        assert self.host is not None
        plain = Scenario("", None, "", False)
        alone = self._host_only(plain, None)
        if alone.outcome == NATIVE:
            return [alone]
        if ngc.defers_to_table:
            return self._ngc_table_cases(ngc, alone)
        notes = ngc.notes()
        if not ngc.read:
            self.uncertain.append(f"the data-centre drivers of NGC release {ngc.release}: its notes were not read, "
                                  f"the list is another release's ({ngc.source})")
        elif ngc.row_uncertain:
            self.uncertain.append(f"{ngc.image}'s row ({ngc.row_source or ngc.source})")
        listed = ngc.listed_for(self.host.branch)
        if listed is None or not self.host.at_least(listed):
            why = (f"{notes} list R{self.host.branch} from {listed} on" if listed is not None else
                   f"{notes} list no R{self.host.branch} driver for forward compatibility ({ngc.listing()})")
            return [replace(alone, reason=f"{alone.reason}; {why}")]
        return self._ngc_forward(ngc, alone, f"{notes} list R{self.host.branch} >= {listed} for data-centre GPUs")

    def _ngc_table_cases(self, ngc: NgcCompat, alone: Case) -> list[Case]:
        """The notes name no driver and refer to CUDA Compatibility: the forward-compatibility
        table of the image's CUDA says which host branches its compat package runs on. That
        reading is the matrix's, not the notes' words, so every verdict on it is uncertain."""
        assert self.host is not None
        fc = self.matrix.forward_compat(self.cuda.major_minor) if self.cuda.major_minor else None
        deferred = (f"{ngc.image}'s release notes name no data-centre driver and refer to CUDA Compatibility: whether "
                    f"its entrypoint can enable forward compatibility is read from NVIDIA's forward-compatibility table"
                    + (f" ({fc.package}: {fc.source})" if fc is not None else ""))
        if ngc.row_uncertain:
            self.uncertain.append(f"NGC release {ngc.release}'s row ({ngc.source})")
        if fc is None or self.host.branch not in fc.host_branches:
            self.uncertain.append(deferred)
        if fc is None:
            return [Case(UNKNOWN, f"{ngc.image}'s notes defer to the forward-compatibility table, which the matrix "
                                  f"{self.matrix.version} has no row of for CUDA {self.cuda.major_minor or self.cuda.version}; "
                                  f"without forward compatibility the image {_would(alone)}",
                         missing=(f"the host branches cuda-compat for CUDA {self.cuda.major_minor or self.cuda.version} supports",),
                         fixes=("use a newer imagelint matrix (--matrix) that knows this CUDA release", *alone.fixes),
                         driver_cuda=alone.driver_cuda)]
        if fc.uncertain:
            self.uncertain.append(f"the host branches {fc.package} supports ({fc.source})")
        if self.host.branch not in fc.host_branches:
            return [replace(alone, reason=f"{alone.reason}; the forward-compatibility table, to which {ngc.image}'s "
                                          f"notes refer, lists {fc.package} for "
                                          f"{', '.join('R' + str(b) for b in fc.host_branches) or 'no branch'}, "
                                          f"not R{self.host.branch}")]
        return self._ngc_forward(ngc, alone, f"the forward-compatibility table, to which {ngc.image}'s notes refer, "
                                             f"lists R{self.host.branch} for {fc.package}", deferred)

    def _ngc_forward(self, ngc: NgcCompat, alone: Case, listed_why: str, deferred: str | None = None) -> list[Case]:
        """The host branch is one the compat package runs on: the GPU and the entrypoint decide.
        ``deferred``: the uncertainty of a branch list read from the table, said unless the GPU
        alone decides (forward compatibility never runs on GeForce, whatever the table says)."""
        assert self.host is not None
        eligible, why_gpu = forward_compat_class(self.gpu, self.matrix)
        if deferred is not None and eligible is not False:
            self.uncertain.append(deferred)
        undriven = self._compat_cannot_drive(self.floor.min_driver if self.floor else None)
        if undriven is not None:
            return [replace(alone, reason=f"{undriven}, so the NGC entrypoint finds compatibility mode unavailable; "
                                          f"{alone.reason}")]
        by = f"the NGC entrypoint ({NGC_ENTRYPOINT})"
        # The compat package of a CUDA release is that release's driver (its floor).
        use = CompatUse("/usr/local/cuda/compat", self.floor.min_driver if self.floor else "?", self.cuda.major_minor, by)
        runs = f"{by} enables forward compatibility: {listed_why}"
        if eligible is False:
            return [replace(alone, reason=f"{why_gpu}: forward compatibility is for data-centre GPUs only, so the NGC "
                                          f"entrypoint finds compatibility mode unavailable; {alone.reason}")]
        if eligible is None:
            return [Case(UNKNOWN, f"on a data-centre GPU {runs}; on a GeForce or workstation GPU it cannot, and the "
                                  f"image {_would(alone)} ({why_gpu})",
                         compat=use, missing=("the pool's GPU model",), driver_cuda=self.cuda.major_minor,
                         fixes=("name the pool's GPU (--gpu A100, or gpus in the target file)", *alone.fixes))]
        forward = Case(FORWARD, f"{runs}, and {why_gpu}", compat=use, driver_cuda=self.cuda.major_minor)
        if ngc.entrypoint_replaced is None:
            return [forward]
        kept = f"if the container still runs {NGC_ENTRYPOINT}"
        skipped = f"if ENTRYPOINT {ngc.entrypoint_replaced} skips the NGC entrypoint"
        return [replace(forward, condition=kept, situation="NGC entrypoint runs"),
                replace(alone, condition=skipped, situation="NGC entrypoint replaced",
                        fixes=(f"start the container through {NGC_ENTRYPOINT} (ENTRYPOINT [\"{NGC_ENTRYPOINT}\", ...])",
                               *alone.fixes))]

    # --- one runtime situation ------------------------------------------------------------------
    def _case(self, sc: Scenario) -> Case:
        refused = self._refused(sc)
        if refused is not None:
            return refused
        skipped = None
        if self.lib is not None:
            if compat_on_loader_path(self.facts, self.lib):
                return self._with_compat(sc, self.lib, IMAGE_LOADS_COMPAT)
            assert self.host is not None
            inj = runtime_injection(sc, self.lib, self.host, self.matrix)
            if inj.uncertain:
                self.uncertain.append(inj.uncertain)
            if inj.injects:
                return self._with_compat(sc, self.lib, inj.who)
            skipped = inj.why
        return self._host_only(sc, skipped)

    def _refused(self, sc: Scenario) -> Case | None:
        from imagelint.matrix.require import (
            Device,
            evaluate_env,
            runtime_enforces_requirements,
        )

        if sc.mode not in ("legacy", "csv") or not runtime_enforces_requirements(sc.mode):
            return None
        env = dict(self.facts.cuda.env)
        if not env:
            return None
        devices = [Device(brand=self.gpu.brand, arch=self.gpu.arch)] if self.gpu else []
        assert self.host is not None and self.dfacts is not None
        outcome = evaluate_env(env, self.host, self.pool.cuda_driver_version or self.dfacts.max_cuda, devices, sc.mode)
        if outcome.result != "fail":
            return None
        return Case(
            FAILS, f"NVIDIA_REQUIRE_* is false on driver {self.host.label}, so the runtime refuses it (IL102 names each term)",
            failure=REFUSED, condition=sc.label,
            fixes=("run on nodes whose driver satisfies the requirement, or rebuild on a CUDA base the driver supports",),
        )

    def _with_compat(self, sc: Scenario, lib: DriverLibrary, by: str) -> Case:
        assert self.host is not None
        compat_cuda = (lib.fwd_compat.cuda_version if lib.fwd_compat and lib.fwd_compat.cuda_version
                       else self.matrix.cuda_for_driver(lib.version or ""))
        use = CompatUse("/" + lib.path, lib.version or "?", compat_cuda, by)
        fc = self.matrix.forward_compat(compat_cuda) if compat_cuda else None
        if fc is not None and fc.uncertain:
            self.uncertain.append(f"the host branches {fc.package} supports ({fc.source})")
        eligible, why_gpu = forward_compat_class(self.gpu, self.matrix)
        loads = f"{by} puts the forward-compat libcuda {lib.version} ({use.path}) first on the loader path"
        without = self._host_only(sc, None)
        off = self._compat_off_fix(by)
        listed = tuple(lib.fwd_compat.driver_branches) if lib.fwd_compat and lib.fwd_compat.driver_branches else (
            tuple(fc.host_branches) + tuple(fc.not_needed_branches) if fc is not None else ())
        older = lib.version is not None and compare(lib.version, self.host) <= 0
        same_branch = major(lib.version or "") == self.host.branch
        if older and same_branch:
            if by == IMAGE_LOADS_COMPAT:  # the loader takes it whatever the runtime does: it is loaded
                return replace(self._host_only(sc, None), compat_inert=(
                    f"the image's loader path loads its compat libcuda {lib.version}, a driver of the host's own branch "
                    f"R{self.host.branch} no newer than {self.host.label}, so forward compatibility adds nothing"))
            return self._host_only(sc, f"the compat libcuda {lib.version} is from the host's own branch, which already runs it")
        if eligible is False:
            return Case(
                FAILS, f"{loads}, and {why_gpu}: forward compatibility works only on data-centre GPUs, so CUDA "
                f"initialisation fails; without it the image {_would(without)}",
                failure=COMPAT_HW, compat=use, condition=sc.label, fixes=(off, *without.fixes),
                driver_cuda=compat_cuda,
            )
        bad_branch = (fc is not None and self.host.branch in fc.incompatible_branches) or (listed and self.host.branch not in listed)
        if older or bad_branch:
            why = (f"it is older than the host driver {self.host.label}" if older else
                   f"{fc.package if fc else 'the compat package'} supports host branches "
                   f"{', '.join('R' + str(b) for b in listed) or 'none listed'}, not R{self.host.branch}")
            return Case(
                FAILS, f"{loads}, but {why}: CUDA initialisation fails", failure=COMPAT_MISMATCH, compat=use,
                condition=sc.label, fixes=(off, *without.fixes), driver_cuda=compat_cuda,
            )
        undriven = self._compat_cannot_drive(lib.version)
        if undriven is not None:
            return Case(FAILS, f"{loads}, but {undriven}: CUDA initialisation fails; without it the image {_would(without)}",
                        failure=COMPAT_HW, compat=use, condition=sc.label, fixes=(off, *without.fixes),
                        driver_cuda=compat_cuda)
        # A branch the package refuses fails on every GPU (803 or 804); otherwise the GPU decides.
        if eligible is None:
            return Case(
                UNKNOWN, f"{loads}; whether it works depends on the GPU ({why_gpu}): data-centre GPUs run it, "
                f"others fail with error 804; without it the image {_would(without)}",
                compat=use, condition=sc.label, missing=("the pool's GPU model",),
                fixes=("name the pool's GPU (--gpu T4, or gpus in the target file)",), driver_cuda=compat_cuda,
            )
        if self.floor is not None and compare(lib.version or "0", self.floor.min_driver) < 0:
            # The compat libcuda is older than the image's CUDA needs: it is the driver now.
            case = self._against_driver(sc, lib.version or "0", f"the compat libcuda {lib.version}", compat_cuda, None)
            return Case(**{**case.__dict__, "compat": use, "reason": f"{loads}; {case.reason}"})
        return Case(
            FORWARD, f"{loads} (CUDA {compat_cuda or '?'}), the host branch "
            f"R{self.host.branch} is one it supports and {why_gpu}",
            compat=use, condition=sc.label, driver_cuda=compat_cuda,
        )

    def _compat_cannot_drive(self, compat_driver: str | None) -> str | None:
        """Why the compat libcuda's own driver branch cannot drive the pool's GPU (Kepler ends
        with R470: a CUDA 12 compat package does not run there), or None."""
        branch = major(compat_driver or "")
        if self.gpu is None or branch is None:
            return None
        support = driver_supports_gpu(branch, self.gpu.arch, self.matrix)
        if support.supported is not False:
            return None
        if support.uncertain:
            self.uncertain.append(f"which branches drive {support.architecture} GPUs ({support.source})")
        return (f"the compat driver is from branch R{branch}, which does not drive {self.gpu.label} "
                f"({support.architecture}, compute {self.gpu.arch})")

    def _compat_off_fix(self, by: str) -> str:
        if by.startswith("the image"):
            return "take /usr/local/cuda/compat off the image's LD_LIBRARY_PATH / ld.so.conf (or remove the cuda-compat package)"
        return ("remove the cuda-compat package from the image (or set the toolkit feature flag "
                "disable-cuda-compat-lib-hook on this pool)")

    def _host_only(self, sc: Scenario, skipped: str | None) -> Case:
        assert self.host is not None and self.dfacts is not None
        return self._against_driver(sc, self.host, f"driver {self.host.label}", self.dfacts.max_cuda, skipped)

    def _against_driver(self, sc: Scenario, driver: str, what: str, driver_cuda: str | None, skipped: str | None) -> Case:
        cuda = self.cuda
        basis = f"CUDA {cuda.version}"
        skip = ""  # why the compat libcuda is not loaded is ``compat_skipped``: findings say it once per case
        if self.floor is not None and compare(driver, self.floor.min_driver) >= 0:
            return Case(NATIVE, f"{what} runs {basis} natively (floor {self.floor.min_driver}){skip}",
                        condition=sc.label, compat_skipped=skipped, driver_cuda=driver_cuda)
        if self.floor is None and self._meets_every_floor_of_major(driver):
            return Case(NATIVE, f"{what} meets the floor of every CUDA {cuda.major}.x release the matrix knows{skip}",
                        condition=sc.label, compat_skipped=skipped, driver_cuda=driver_cuda)
        fixes = self._fixes(driver, skipped)
        mvc = self.matrix.minor_version_compat(cuda.major) if cuda.major is not None else None
        if mvc is not None and mvc.uncertain:
            self.uncertain.append(f"the CUDA {cuda.major}.x minor-version floor ({mvc.source})")
        need = (f"needs driver >= {self.floor.min_driver}" if self.floor else
                "(major only: its floor is unknown)" if cuda.major_minor is None else "has no floor in the matrix")
        if mvc is not None and compare(driver, mvc.min_driver) >= 0 and self._same_major(driver_cuda):
            limits = (
                f"PTX newer than the driver's CUDA {driver_cuda or '?'} cannot be JIT-compiled "
                "('the provided PTX was compiled with an unsupported toolchain')",
                "APIs newer than the driver fail with cudaErrorCallRequiresNewerDriver",
            )
            below = (f"{what} is below the floor of {basis} ({self.floor.min_driver})" if self.floor else
                     f"{basis} {need}, so {what} is judged against its major")
            return Case(
                MINOR, f"{below}; CUDA {cuda.major}.x minor-version compatibility covers it from driver "
                f"{mvc.min_driver}{skip}",
                limits=limits, condition=sc.label, compat_skipped=skipped, fixes=fixes, driver_cuda=driver_cuda,
            )
        if self.floor is None and not self._below_major(driver_cuda):
            return Case(
                UNKNOWN, f"{basis} is not a release the matrix knows, so its driver floor is unknown{skip}",
                condition=sc.label, compat_skipped=skipped, missing=(f"the driver floor of CUDA {cuda.version}",),
                fixes=("use a newer imagelint matrix (--matrix) that knows this CUDA release",), driver_cuda=driver_cuda,
            )
        return Case(
            FAILS, f"{basis} {need} but {what} reports CUDA {driver_cuda or '?'}{skip}",
            failure=INSUFFICIENT, condition=sc.label, compat_skipped=skipped, fixes=fixes, driver_cuda=driver_cuda,
        )

    def _same_major(self, driver_cuda: str | None) -> bool:
        return driver_cuda is None or major(driver_cuda) == self.cuda.major or (major(driver_cuda) or 0) > (self.cuda.major or 0)

    def _below_major(self, driver_cuda: str | None) -> bool:
        return driver_cuda is not None and (major(driver_cuda) or 0) < (self.cuda.major or 0)

    def _meets_every_floor_of_major(self, driver: str) -> bool:
        """Major-only evidence (``libcudart.so.12``): native when the driver meets every
        floor of that major (a release the matrix does not know could need more)."""
        if self.cuda.major_minor is not None:
            return False
        floors = [r.min_driver for r in self.matrix.cuda_releases() if major(r.version) == self.cuda.major]
        return bool(floors) and all(compare(driver, f) >= 0 for f in floors)

    # --- what to change ---------------------------------------------------------------------------
    def _fixes(self, driver: str, skipped: str | None) -> tuple[str, ...]:
        out: list[str] = []
        if self.floor is not None:
            out.append(f"upgrade the pool's driver to >= {self.floor.min_driver} (the floor of CUDA {self.floor.release})")
        newest = self._newest_native_cuda(driver)
        if newest is not None and (self.floor is None or newest != self.floor.release):
            out.append(f"or rebuild on CUDA {newest}, the newest release driver {driver} runs natively")
        fc = self.matrix.forward_compat(self.cuda.major_minor) if self.cuda.major_minor else None
        eligible, _ = forward_compat_class(self.gpu, self.matrix)
        assert self.host is not None
        note = self.lib.fwd_compat if self.lib is not None else None
        supported = tuple(note.driver_branches) if note and note.driver_branches else (fc.host_branches if fc else ())
        if fc is not None and self.host.branch in supported and eligible is not False:
            if self.lib is None and self.ngc is None:  # an NGC container already carries it
                out.append(f"or install {fc.package} in the image (forward compatibility: data-centre GPUs, host "
                           f"branch R{self.host.branch} supported; the runtime loads it from toolkit 1.17.5 on, or put "
                           "/usr/local/cuda/compat on LD_LIBRARY_PATH)")
            elif skipped:
                out.append("or let the image's compat libcuda load: put /usr/local/cuda/compat on its LD_LIBRARY_PATH "
                           "or use toolkit >= 1.17.5 (the enable-cuda-compat hook)")
        return tuple(out)

    def _newest_native_cuda(self, driver: str) -> str | None:
        # Once per driver: every scenario's fixes ask it (a dozen scenarios a pool), and each answer
        # walks the matrix's whole CUDA release list.
        if driver not in self._newest_native:
            self._newest_native[driver] = self._find_newest_native_cuda(driver)
        return self._newest_native[driver]

    def _find_newest_native_cuda(self, driver: str) -> str | None:
        best: tuple[tuple[int, ...], str] | None = None
        for release in self.matrix.cuda_releases():
            if release.uncertain or release.release_kind == "rc" or compare(driver, release.min_driver) < 0:
                continue
            key = tuple(int(p) for p in release.version.split(".") if is_digits(p))
            if best is None or key > best[0]:
                best = (key, release.version)
        return best[1] if best else None


def _would(case: Case) -> str:
    """``without it the image <...>``: the host-only outcome in a few words."""
    if case.outcome == NATIVE:
        return "would run natively on the host driver"
    if case.outcome == MINOR:
        return "would run through minor-version compatibility"
    if case.outcome == FAILS:
        return "would still fail (its CUDA needs a newer driver)"
    return "could not be judged either"


__all__ = ["judge_pool"]
