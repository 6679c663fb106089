"""Precision and recall of `imagelint lint` on a hand-labelled corpus of real repository files.

usage: python3 benchmarks/lint_corpus.py CORPUS_DIR LABELS_JSON [-v] [-- extra imagelint args]

The corpus itself is never committed (third-party files): CORPUS_DIR holds the files (paths
relative to it), LABELS_JSON maps each path to the labels a GPU platform engineer wrote for it
before imagelint was run:
  read    "full" (must be read) | "note" (may be skipped, but named in a note) | "any"
  gpu     GPU-requesting pod specs in the file (nvidia.com/* resources, claims, CDI requests)
  cuda    CUDA major.minor of the built image / GPU containers' images (null = none or unknown)
  expect  rules that must fire at warning or error level (target: --driver 535.104.05)
  allow   rules tolerated at any severity
Runs ONE `imagelint lint` over every labelled file (JSON report, wall time measured), then reads
the same files through imagelint.static to count GPU pod specs found and CUDA evidence.
Info findings are counted, never scored as false positives.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict

corpus, labels_path = sys.argv[1], sys.argv[2]
extra = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
labels = json.load(open(labels_path))
# --driver-cuda X.Y: score IL101 for another driver than the labels' 535.104.05 (CUDA 12.2): every
# GPU image whose hand-labelled CUDA is above X.Y must get IL101 at warning or error, none other.
DRIVER, DRIVER_CUDA = "535.104.05", None
if "--driver" in sys.argv[3:sys.argv.index("--") if "--" in sys.argv else None]:
    i = sys.argv.index("--driver")
    DRIVER, DRIVER_CUDA = sys.argv[i + 1], sys.argv[sys.argv.index("--driver-cuda") + 1]


def _mm(v):
    return tuple(int(x) for x in v.split(".")[:2])


if DRIVER_CUDA:
    for p_, lab_ in labels.items():
        manifest_ = p_.endswith((".yaml", ".yml"))
        above = lab_["cuda"] and _mm(lab_["cuda"]) > _mm(DRIVER_CUDA) and not (manifest_ and lab_["gpu"] == 0)
        lab_["expect"] = [r for r in lab_["expect"] if r != "IL101"] + (["IL101"] if above else [])
        lab_["allow"] = [r for r in lab_["allow"] if r != "IL101"]
paths = sorted(labels)
out = tempfile.mktemp(suffix=".json")
cmd = ["imagelint", "lint", *paths, "--driver", DRIVER, "--format", "json", "--output", out, *extra]
t0 = time.perf_counter()
proc = subprocess.run(cmd, cwd=corpus, capture_output=True, text=True)
wall = time.perf_counter() - t0
if not os.path.exists(out):
    print("imagelint failed:", proc.returncode, proc.stderr.strip()[:500]); sys.exit(1)
rep = json.load(open(out))
SEV = {"error": 3, "warning": 2, "info": 1}
got = defaultdict(dict)   # path -> rule -> max severity
def file_of(ref: str) -> str:
    for p in paths:
        if ref == p or ref.startswith(p + ":") or ref.startswith(p + " "):
            return p
    return ref
target_level = Counter()  # findings about the target alone (no place in a file): not per-file labels
for r in rep["results"]:
    p = file_of(r["image"]["ref"])
    for f in r["findings"]:
        if not f.get("location") and f.get("pool"):
            target_level[(f["rule"], f["severity"])] += 1
            continue
        prev = got[p].get(f["rule"])
        if prev is None or SEV[f["severity"]] > SEV[prev]:
            got[p][f["rule"]] = f["severity"]
notes = rep.get("notices", []) + [n for r in rep["results"] for n in r.get("notices", [])]
notes += [f"{r['image']['ref']}: {r['error']}" for r in rep["results"] if r.get("error")]
noted = {p for p in paths if any(n.startswith(p + ":") or n.startswith(p + " ") for n in notes)}

tp, fp, fn, err_fp, info = Counter(), Counter(), Counter(), Counter(), Counter()
fp_list, fn_list = [], []
for p in paths:
    lab = labels[p]
    expect, allow = set(lab["expect"]), set(lab["allow"])
    for rule, sev in got[p].items():
        if sev == "info":
            info[rule] += 1
            continue
        if rule in expect:
            tp[rule] += 1
        elif rule not in allow:
            fp[rule] += 1; fp_list.append((p, rule, sev))
            if sev == "error": err_fp[rule] += 1
    for rule in expect:
        if got[p].get(rule) not in ("warning", "error"):
            fn[rule] += 1; fn_list.append((p, rule))

# Coverage through the API: GPU pod specs found, CUDA evidence per file.
sys.path.insert(0, os.getcwd())
os.chdir(corpus)
from imagelint.core.lint import read_static

try:
    from imagelint.core.lint import enrich
except ImportError:  # an imagelint from before run-level enrichment (for a baseline)
    def enrich(statics, matrix):
        return statics
from imagelint.matrix import load_matrix  # noqa
try:
    matrix = load_matrix()
except TypeError:
    matrix = load_matrix(None)
statics = {}
for p in paths:
    try:
        statics[p] = read_static(p, matrix)
    except Exception:  # a file error is reported by the CLI run too
        pass
statics = {s.path: s for s in enrich(list(statics.values()), matrix)}
gpu_expected = gpu_found = 0
cuda_ok = cuda_total = 0
silent, cov_miss, cuda_miss = [], [], []
for p in paths:
    lab = labels[p]
    st = statics.get(p)
    specs = set()
    versions = set()
    for f in (st.facts if st else ()):
        w = f.workload
        if w is not None and (w.pod_resources or getattr(w, "pod_claims", ()) or getattr(w, "cdi_devices", ())):
            specs.add((w.kind, w.name, getattr(w, "pod_path", "")))
        for v in f.cuda.versions:
            versions.add(".".join(v.version.split(".")[:2]))
    n = len(specs)
    gpu_expected += lab["gpu"]; gpu_found += min(n, lab["gpu"])
    if n < lab["gpu"]:
        cov_miss.append((p, lab["gpu"], n, p in noted))
        if p not in noted: silent.append(p)
    if lab["read"] == "note" and p not in noted and not (st and st.facts) and not got[p]:
        silent.append(p)
    if lab["cuda"] and not (p.endswith((".yaml", ".yml")) and lab["gpu"] == 0):  # manifests: GPU containers only
        cuda_total += 1
        if lab["cuda"] in versions and len(versions) <= 2: cuda_ok += 1
        else: cuda_miss.append((p, lab["cuda"], sorted(versions)))

rules = sorted(set(tp) | set(fp) | set(fn))
print(f"files {len(paths)}  one run wall {wall:.2f}s  exit {proc.returncode}")
print(f"{'rule':7} {'TP':>3} {'FP':>3} {'FN':>3} {'err-FP':>6} {'prec':>6} {'recall':>6}   info")
T = F = N = 0
for r in sorted(set(rules) | set(info)):
    a, b, c = tp[r], fp[r], fn[r]; T += a; F += b; N += c
    pr = f"{a/(a+b):.2f}" if a + b else "  - "; rc = f"{a/(a+c):.2f}" if a + c else "  - "
    print(f"{r:7} {a:3} {b:3} {c:3} {err_fp[r]:6} {pr:>6} {rc:>6}   {info[r]}")
print(f"{'all':7} {T:3} {F:3} {N:3} {sum(err_fp.values()):6} "
      f"{(T/(T+F) if T+F else 1):6.2f} {(T/(T+N) if T+N else 1):6.2f}   {sum(info.values())}")
print("target-level findings (once per run, not per file):",
      ", ".join(f"{r} {sev} x{n}" for (r, sev), n in sorted(target_level.items())) or "none")
print(f"GPU pod specs found {gpu_found}/{gpu_expected}; CUDA evidence right {cuda_ok}/{cuda_total}; "
      f"files skipped in silence {len(set(silent))}; notes {len(notes)}")
if "-v" in sys.argv:
    for x in fp_list: print("FP", *x)
    for x in fn_list: print("FN", *x)
    for x in cov_miss: print("COV", *x)
    for x in cuda_miss: print("CUDA", *x)
    for x in sorted(set(silent)): print("SILENT", x)
