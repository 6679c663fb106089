"""The chain of a pod whose GPU comes through Dynamic Resource Allocation (``spec.resourceClaims``).

For a Pending pod each claim it names is followed link by link, and the first link that breaks
is the finding (the same evidence/fix form as the other stages; the scheduler's own words are
added as evidence when it wrote any):

1. the claim exists — ``resourceClaimName`` names a ResourceClaim of the namespace, or
   ``resourceClaimTemplateName`` a ResourceClaimTemplate (``dra-claim-missing``, stage 4);
2. every request's DeviceClass exists (``dra-device-class-missing``, stage 4) — the scheduler's
   PreFilter says ``request R: device class C does not exist``;
3. an allocated claim reserved for other pods binds this pod to the allocation's node: a node the
   pod cannot use there is ``dra-claim-in-use`` (the scheduler: ``resourceclaim in use`` /
   ``resourceclaim not available on the node``);
4. the DRA driver the DeviceClass selects (``device.driver == '...'``) publishes devices in
   ResourceSlices — none is ``dra-no-resourceslices`` (stage 3: its kubelet plugin does not run);
5. some published device matches the DeviceClass's and the request's CEL selectors together —
   none is ``dra-selector-unsatisfiable`` (the scheduler: ``cannot allocate all claims``).

A link whose objects could not be read (RBAC, not in the dump) is not judged, and said as a
note; a selector the CEL subset cannot decide is never a finding (unknown is not "no").
"""

from __future__ import annotations

from imagelint.cluster.dra import ClaimInfo, RequestInfo, SliceDevice, TemplateInfo
from imagelint.cluster.objects import items, text
from imagelint.cluster.pods import PodInfo
from imagelint.cluster.source import NOT_IN_DUMP
from imagelint.deploytarget import GpuSpec
from imagelint.doctor.clues import finding, pod_ref
from imagelint.doctor.context import Context
from imagelint.doctor.model import Diagnosis, Evidence, ObjectRef
from imagelint.doctor.workloads import PodWorkload
from imagelint.lazyre import lazy_pattern

_NEGATION = lazy_pattern(r"(?<![=!])!(?!=)")
_DRIVER = lazy_pattern(r"""^device\.driver\s*==\s*['"]([\w.-]+)['"]$""")
_ATTR = lazy_pattern(r"""^device\.attributes\[\s*['"]([\w./-]+)['"]\s*\]\.(\w+)\s*(==|!=)\s*['"]([^'"]*)['"]$""")


def uses_claims(pod: PodInfo) -> bool:
    return bool(items(pod.spec, "resourceClaims"))


def device_selected(expression: str, device: SliceDevice) -> bool | None:
    """Whether a CEL selector selects this published device: True / False / None (cannot tell).
    ``&&`` of atoms; ``device.driver`` and string attributes are compared exactly, the rest goes
    to the CEL subset of ``imagelint.kube.cel`` over the device's own attributes."""
    from imagelint.kube.cel import selects

    flat = " ".join(expression.split())
    if "||" in flat or _NEGATION.search(flat):
        return None
    attrs = device.attributes
    gpu = GpuSpec(product=attrs.get("productName") or None, compute_capability=attrs.get("cudaComputeCapability") or None,
                  family=attrs.get("architecture") or None, mig_profiles=(attrs["profile"],) if attrs.get("profile") else ())
    verdicts: list[bool | None] = []
    for atom in flat.split("&&"):
        atom = atom.strip()
        while atom.startswith("(") and atom.endswith(")"):
            atom = atom[1:-1].strip()
        driver = _DRIVER.match(atom)
        attr = None if driver else _ATTR.match(atom)
        if driver:
            verdicts.append(driver.group(1) == device.driver)
        elif attr and attr.group(1) == device.driver and attr.group(2) in attrs:
            hit = attrs[attr.group(2)] == attr.group(4)
            verdicts.append(hit if attr.group(3) == "==" else not hit)
        elif attr and attr.group(1) != device.driver:
            verdicts.append(None)  # another driver's attribute: CEL errors on a device without it
        else:
            verdicts.append(selects(atom, gpu, attrs.get("driverVersion") or None, attrs.get("cudaDriverVersion") or None))
    if any(v is False for v in verdicts):
        return False
    return None if any(v is None for v in verdicts) else True


def _drivers(selectors: tuple[str, ...]) -> set[str]:
    return {m.group(1) for e in selectors for atom in " ".join(e.split()).split("&&") if (m := _DRIVER.match(atom.strip().strip("()")))}


def check_dra_pod(ctx: Context, w: PodWorkload, word: Evidence | None) -> tuple[list[Diagnosis], list[str]]:
    """Findings for one Pending pod that asks through claims, and notes on links not judged."""
    pod, dra, notes = w.pod, ctx.snap.dra, []
    if not dra.served and not dra.refused:
        return [], []
    for index, entry in enumerate(items(pod.spec, "resourceClaims")):
        claim_name = text(entry, "resourceClaimName", limit=253)
        template_name = text(entry, "resourceClaimTemplateName", limit=253)
        # The pod names a claim, or a template the claim is made from: the same chain from either.
        claim: ClaimInfo | None = None
        held: ClaimInfo | TemplateInfo | None
        if claim_name:
            kind, name, field, plural = "ResourceClaim", claim_name, "resourceClaimName", "resourceclaims"
            held = claim = dra.claim(pod.namespace, claim_name)
        elif template_name:
            kind, name, field, plural = ("ResourceClaimTemplate", template_name, "resourceClaimTemplateName",
                                         "resourceclaimtemplates")
            held = dra.template(pod.namespace, template_name)
        else:
            continue
        holder = ObjectRef(kind, name, pod.namespace)
        if held is None:
            if dra.unread(plural) is not None:
                notes.append(_unread(dra.unread(plural), plural))
                continue
            return [_with_word(finding(
                ctx, "dra-claim-missing", "pod", pod.where, f"its {kind} {name} does not exist",
                [Evidence(pod_ref(pod), field=f"spec.resourceClaims[{index}].{field}", value=name),
                 Evidence(holder, value="not found")]), word)], notes
        requests: tuple[RequestInfo, ...] = held.requests
        found = _classes(ctx, pod, holder, requests, word, notes)
        if found is None and claim is not None and claim.allocated:
            found = _reserved_elsewhere(ctx, w, claim, word)
            if found is None:
                continue  # allocated (for this pod, or where it may run): the claim is not what it waits on
        if found is None:
            found = _published(ctx, pod, holder, requests, word, notes)
        if found is not None:
            return [found], notes
    return [], notes


def _unread(status: int | None, kind: str) -> str:
    why = "not in the dump" if status == NOT_IN_DUMP else ("RBAC forbids listing them" if status == 403 else f"not read ({status})")
    return f"partly checked: {kind} {why}: the DRA claim chain is not judged"


def _with_word(f: Diagnosis, word: Evidence | None) -> Diagnosis:
    from dataclasses import replace

    return replace(f, evidence=(f.evidence + (word,))[:4]) if word is not None else f


def _field(holder: ObjectRef, index: int, leaf: str) -> str:
    base = "spec.spec.devices" if holder.kind == "ResourceClaimTemplate" else "spec.devices"
    return f"{base}.requests[{index}].exactly.{leaf}"


def _classes(ctx: Context, pod: PodInfo, holder: ObjectRef, requests: tuple[RequestInfo, ...], word: Evidence | None,
             notes: list[str]) -> Diagnosis | None:
    dra = ctx.snap.dra
    if dra.unread("deviceclasses") is not None:
        notes.append(_unread(dra.unread("deviceclasses"), "deviceclasses"))
        return None
    for index, request in enumerate(requests):
        for name in (request.device_class, *request.alternatives):
            if name and dra.device_class(name) is None:
                have = ", ".join(dra.device_classes[:6]) or "none"
                return _with_word(finding(
                    ctx, "dra-device-class-missing", "pod", pod.where,
                    f"request {request.name or index} asks for DeviceClass {name}, which does not exist",
                    [Evidence(holder, field=_field(holder, index, "deviceClassName"), value=name),
                     Evidence(ObjectRef("DeviceClass", name), value=f"not found (DeviceClasses: {have})")]), word)
    return None


def _reserved_elsewhere(ctx: Context, w: PodWorkload, claim: ClaimInfo, word: Evidence | None) -> Diagnosis | None:
    pod = w.pod
    if not claim.reserved_for or pod.name in claim.reserved_for:
        return None
    where = {d.node for d in ctx.snap.dra.devices if f"{d.driver}/{d.pool}/{d.name}" in claim.allocated_devices and d.node}
    facts = w.workload
    usable = where
    if facts is not None and "nodes" not in ctx.snap.refused:
        # the nodeSelector exactly (per node, hostname included), then the pool-level affinity semantics
        usable = {n.name for n in ctx.selected_nodes(facts) if all(n.labels.get(k) == v for k, v in facts.node_selector.items())}
    says = word is not None and any(r.id == "dra-claim-in-use" for r in ctx.signatures.all_matches(
        word.event_message or word.value, "event", reason="FailedScheduling"))
    if not says and (not where or where & usable):
        return None
    holders = ", ".join(claim.reserved_for[:3])
    on = f" on node {', '.join(sorted(where))}" if where else ""
    evidence = [Evidence(ObjectRef("ResourceClaim", claim.name, claim.namespace), field="status.reservedFor",
                         value=", ".join(f"pods/{p}" for p in claim.reserved_for[:3]))]
    if claim.allocated_devices:
        evidence.append(Evidence(ObjectRef("ResourceClaim", claim.name, claim.namespace), field="status.allocation.devices.results",
                                 value=", ".join(claim.allocated_devices[:3]) + on))
    return _with_word(finding(ctx, "dra-claim-in-use", "pod", pod.where,
                              f"its ResourceClaim {claim.name} is allocated{on} and reserved for pod {holders}", evidence), word)


def _published(ctx: Context, pod: PodInfo, holder: ObjectRef, requests: tuple[RequestInfo, ...], word: Evidence | None,
               notes: list[str]) -> Diagnosis | None:
    dra = ctx.snap.dra
    if dra.unread("resourceslices") is not None:
        notes.append(_unread(dra.unread("resourceslices"), "resourceslices"))
        return None
    for index, request in enumerate(requests):
        cls = dra.device_class(request.device_class)
        if cls is None:
            continue  # firstAvailable only, or a class not read
        drivers = _drivers(cls.selectors) or {d.driver for d in dra.devices}
        devices = [d for d in dra.devices if d.driver in drivers]
        if not devices:
            named = ", ".join(sorted(drivers)) or "its driver"
            evidence = [Evidence(ObjectRef("DeviceClass", cls.name), field="spec.selectors", value=" && ".join(cls.selectors)[:300]),
                        Evidence(ObjectRef("ResourceSlice", "*"), field="spec.driver",
                                 value=f"no ResourceSlice of {named} ({len(dra.node_devices)} node/driver pair(s) publish devices)")]
            plugin = _kubelet_plugin(ctx, drivers)
            if plugin is not None:
                evidence.append(plugin)
            return _with_word(finding(ctx, "dra-no-resourceslices", "pod", pod.where,
                                      f"no node publishes a device of {named} for DeviceClass {cls.name}", evidence), word)
        selectors = cls.selectors + request.selectors
        verdicts = [all_of(selectors, d) for d in devices]
        if verdicts and all(v is False for v in verdicts):
            seen = sorted({d.attributes.get("productName", d.name) for d in devices})
            shown = ", ".join(seen[:3]) + (f" and {len(seen) - 3} more" if len(seen) > 3 else "")
            return _with_word(finding(
                ctx, "dra-selector-unsatisfiable", "pod", pod.where,
                f"request {request.name or index}: no published device matches DeviceClass {cls.name} and its selectors",
                [Evidence(holder, field=_field(holder, index, "selectors"), value=" && ".join(request.selectors)[:300] or "(none)"),
                 Evidence(ObjectRef("ResourceSlice", "*"), field="spec.devices",
                          value=f"{len(devices)} device(s) of {', '.join(sorted(drivers))}: {shown}")]), word)
    return None


def all_of(selectors: tuple[str, ...], device: SliceDevice) -> bool | None:
    verdicts = [device_selected(e, device) for e in selectors]
    if any(v is False for v in verdicts):
        return False
    return None if any(v is None for v in verdicts) else True


def _kubelet_plugin(ctx: Context, drivers: set[str]) -> Evidence | None:
    """The DRA driver's kubelet-plugin DaemonSet, when one is listed: its Ready count says whether it runs."""
    for ds in ctx.snap.daemonsets:
        if "kubelet-plugin" in ds.name or ("dra" in ds.name and "driver" in ds.name):
            return Evidence(ObjectRef("DaemonSet", ds.name, ds.namespace), field="status",
                            value=f"{ds.ready}/{ds.desired} pods Ready")
    if "daemonsets" in ctx.snap.refused:
        return None
    return Evidence(ObjectRef("DaemonSet", "*"), value=f"no DRA kubelet-plugin DaemonSet found (driver {', '.join(sorted(drivers))})")


__all__ = ["all_of", "check_dra_pod", "device_selected", "uses_claims"]
