"""Stage 5, per GPU pod on a node: the RuntimeClass exists and its handler is configured on the
node, the runtime's own failures (sandbox / container creation events), ``hostUsers: false``."""

from __future__ import annotations

from imagelint.doctor.clues import finding, pod_clues, pod_ref
from imagelint.doctor.context import Context
from imagelint.doctor.model import Evidence, ObjectRef
from imagelint.doctor.selectors import nearest_name


def check_runtime(ctx: Context) -> list[str]:
    classes = {rc.name: rc for rc in ctx.snap.runtime_classes}
    classes_known = "runtimeclasses" not in ctx.snap.refused
    placed = 0
    for w in ctx.gpu_workloads:
        pod = w.pod
        if pod.spec.get("hostUsers") is False:
            ctx.add(finding(ctx, "host-users-false-with-gpu", "pod", pod.where, "a GPU pod with hostUsers: false",
                            [Evidence(pod_ref(pod), field="spec.hostUsers", value="false")]))
        if not pod.node:
            continue
        placed += 1
        if pod.node in ctx.blocked:
            continue
        _image_verdicts(ctx, w)
        name = w.workload.runtime_class_name if w.workload else None
        node = ctx.node_by_name.get(pod.node)
        if name and classes_known and name not in classes:
            near = nearest_name(name, classes)
            ctx.add(finding(ctx, "runtime-class-missing", "pod", pod.where,
                            f"RuntimeClass {name} does not exist" + (f" (did you mean {near}?)" if near else ""),
                            [Evidence(pod_ref(pod), field="spec.runtimeClassName", value=name),
                             Evidence(ObjectRef("RuntimeClass", "*"), value=", ".join(sorted(classes)) or "none exist")]))
            continue
        handler = classes[name].handler if name and name in classes else None
        evidence: list[Evidence] = []
        if handler and node is not None and node.runtime_handlers and handler not in node.runtime_handlers:
            evidence.append(Evidence(ObjectRef("Node", node.name), field="status.runtimeHandlers",
                                     value=f"{', '.join(node.runtime_handlers)} (no {handler})"))
        if all(c.ready for c in pod.containers if not c.init) and pod.containers and not evidence:
            continue
        clues = [c for c in pod_clues(ctx, pod) if c.signature is not None and c.signature.stage in (1, 5)]
        row_id = clues[0].signature.id if clues and clues[0].signature else ("runtime-handler-not-configured" if evidence else None)
        if row_id is None:
            continue
        if handler and row_id == "runtime-handler-not-configured":
            evidence.insert(0, Evidence(ObjectRef("RuntimeClass", name or ""), field="handler", value=handler))
        message = f"the container runtime on {pod.node} cannot start it ({row_id.replace('-', ' ')})"
        ctx.add(finding(ctx, row_id, "pod", pod.where, message, [c.evidence for c in clues] + evidence, nodes=(pod.node,), stage=5))
    # Controllers whose pods admission rejects for their RuntimeClass.
    for event in ctx.snap.events:
        if event.reason != "FailedCreate":
            continue
        row = ctx.signatures.first_match(event.message, "event", reason=event.reason)
        if row is not None and row.stage == 5 and not ctx.snap.options.pod and ctx.snap.options.namespace in (None, event.namespace):
            kind, owner = ctx.workload_of(event.object_kind, event.namespace, event.object_name)
            ctx.add(finding(ctx, row.id, "workload", f"{event.namespace}/{owner}",
                            f"{kind} {owner} cannot create its pods",
                            [Evidence(ObjectRef(event.object_kind, event.object_name, event.namespace),
                                      event_reason=event.reason, event_message=event.message)]))
    return [f"{placed} GPU pod(s) placed on nodes", f"{len(classes)} RuntimeClass(es)" if classes_known else "RuntimeClasses not read"]


def _image_verdicts(ctx: Context, w) -> None:
    """``check``'s errors for the image on the pool of the node the pod was placed on (--images)."""
    if ctx.image_side is None:
        return
    for container in w.pod.spec.get("containers") or () if isinstance(w.pod.spec.get("containers"), list) else ():
        image = str(container.get("image") or "") if isinstance(container, dict) else ""
        verdicts = ctx.image_side.verdicts.get((image, w.pod.node), [])
        if verdicts:
            ctx.add(finding(ctx, "image-check-failed", "pod", w.pod.where,
                            f"image {image} does not fit node {w.pod.node}: " + ", ".join(dict.fromkeys(v.rule for v in verdicts)),
                            [Evidence(ObjectRef("Image", image), field=v.rule, value=v.message) for v in verdicts],
                            nodes=(w.pod.node,)))


__all__ = ["check_runtime"]
