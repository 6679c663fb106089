"""A Target as readable text (``imagelint target show``)."""

from __future__ import annotations

from imagelint.deploytarget.model import Target


def describe_target(target: Target) -> str:
    """A readable multi-line summary (``imagelint target show``)."""
    if not target.known:
        return "no target: give --driver/--gpu, --target-file or --cluster"
    lines = [f"target from {target.source}: {len(target.pools)} pool(s)"]
    for pool in target.pools:
        # A node count is shown only where one was said: flags and most target files give none.
        count = f"{pool.node_count} node{'s' if pool.node_count != 1 else ''}, " if pool.node_count else ""
        lines.append(f"pool {pool.name} ({count}{pool.source})")
        driver = pool.driver or "unknown"
        if pool.driver and "." not in pool.driver:
            driver += " (bare branch: some " + pool.driver + ".x, judged as the oldest)"
        cuda = f" (CUDA {pool.cuda_driver_version})" if pool.cuda_driver_version else (
            " (CUDA unknown to the matrix)" if pool.driver else "")
        lines.append(f"  driver        {driver}{cuda}")
        for gpu in pool.gpus or ():
            bits = [gpu.product or "unnamed GPU"]
            if gpu.compute_capability:
                bits.append(f"sm {gpu.compute_capability}")
            for extra in (gpu.brand, gpu.family):
                if extra:
                    bits.append(extra)
            if gpu.count is not None:
                bits.append(f"x{gpu.count}")
            if gpu.mig_profiles:
                bits.append("MIG " + ",".join(gpu.mig_profiles))
            lines.append(f"  gpu           {', '.join(bits)}")
        for label, value in (
            ("arch", pool.arch),
            ("toolkit", pool.toolkit),
            ("runtime mode", pool.runtime_mode),
            ("device plugin", pool.device_plugin),
            ("device lists", ",".join(pool.device_list_strategy) or None),
            ("mig strategy", pool.mig_strategy),
            ("runtime class", pool.runtime_class),
        ):
            if value:
                lines.append(f"  {label:<13} {value}")
        if pool.accept_envvar_unprivileged is not None:
            lines.append(f"  {'envvar unpriv':<13} {'accepted' if pool.accept_envvar_unprivileged else 'refused'}")
        for name, amount in sorted(pool.resources.items()):
            lines.append(f"  resource      {name}={amount}")
        for taint in pool.taints:
            value = f"={taint.value}" if taint.value is not None else ""
            lines.append(f"  taint         {taint.key}{value}:{taint.effect}")
    if target.runtime_classes:
        lines.append(f"runtime classes: {', '.join(target.runtime_classes)}")
    for warning in target.warnings:
        lines.append(f"warning: {warning}")
    from imagelint.escape import printable_lines

    # Pool names, labels, taints and versions come from the cluster's objects: shown escaped.
    return printable_lines(lines)


__all__ = ["describe_target"]
