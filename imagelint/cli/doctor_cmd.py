"""``imagelint doctor --cluster``: flags → connect → ``imagelint.doctor.run_doctor`` → text/JSON → exit code.

Exit codes as ``check``: 0 healthy (every stage that could be checked is ok), 1 problems
found, 2 usage, 3 the cluster could not be read (kubeconfig, TLS, 401, a dead server).
"""

from __future__ import annotations

from typing import Optional

from imagelint.cli import fail, root
from imagelint.cli.common import with_source_options
from imagelint.cli.spec import Exit, Option, echo
from imagelint.errors import ImagelintError, UsageError
from imagelint.sources import SourceOptions

PANEL = "Cluster"


@root.command("doctor")
@with_source_options
def doctor_command(
    cluster: bool = Option(False, "--cluster", help="Diagnose the live cluster (kubeconfig or in-cluster); required.", rich_help_panel=PANEL),
    context: Optional[str] = Option(None, "--context", help="kubeconfig context.", rich_help_panel=PANEL),
    kubeconfig: Optional[str] = Option(None, "--kubeconfig", help="kubeconfig file.", rich_help_panel=PANEL),
    namespace: Optional[str] = Option(None, "--namespace", "-n", help="Only pods of this namespace (NVIDIA components are read everywhere).", rich_help_panel=PANEL),
    pod: Optional[str] = Option(None, "--pod", help="Only this pod (in --namespace, else the context's namespace).", rich_help_panel=PANEL),
    images: bool = Option(False, "--images", help="Also read the images GPU-node pods run (config only, through the cache): their env for isolation, check's rules for stage 5."),
    format: str = Option("text", "--format", help="text or json."),
    output: Optional[str] = Option(None, "--output", "-o", help="Write the report to this file instead of stdout."),
    verbose: bool = Option(False, "--verbose", "-v", help="Also say what each finding means and where that comes from."),
    *,
    source_options: SourceOptions,
) -> None:
    """Say, stage by stage, why GPU pods stay Pending, fail to start or share a GPU — and what to change."""
    from imagelint.cluster.connection import connect
    from imagelint.doctor import DoctorOptions, run_doctor
    from imagelint.doctor.render import render_json, render_text

    try:
        if not cluster:
            raise UsageError("doctor needs --cluster (it reads the live cluster)")
        if format not in ("text", "json"):
            raise UsageError(f"--format must be text or json, not {format!r}")
        timeout = source_options.timeout  # --timeout: per API request too (connect at most 5 s)
        with connect(context, kubeconfig, (min(5.0, timeout), timeout)) as conn:
            options = DoctorOptions(namespace=namespace or (conn.namespace if pod else None), pod=pod)
            image_side = None
            if images:
                from imagelint.doctor.images import image_side_reader
                from imagelint.matrix import load_matrix

                image_side = image_side_reader(source_options, load_matrix())
            report = run_doctor(conn, options, image_side=image_side)
        text = render_json(report) if format == "json" else render_text(report, verbose=verbose)
        if output is not None:
            from imagelint.report.output import write_report

            write_report(output, text)
        else:
            echo(text, nl=False)
    except ImagelintError as exc:
        raise fail(exc) from None
    raise Exit(report.exit_code)
