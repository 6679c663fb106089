"""``imagelint doctor --cluster``: flags → connect → ``imagelint.doctor.run_doctor`` → text/JSON → exit code.

Exit codes as ``check``: 0 healthy (every stage that could be checked is ok), 1 problems
found, 2 usage, 3 the cluster could not be read (kubeconfig, TLS, 401, a dead server).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from imagelint.cli import app, fail
from imagelint.errors import ImagelintError, UsageError

PANEL = "Cluster"


@app.command("doctor")
def doctor_command(
    cluster: bool = typer.Option(False, "--cluster", help="Diagnose the live cluster (kubeconfig or in-cluster); required.", rich_help_panel=PANEL),
    context: Optional[str] = typer.Option(None, "--context", help="kubeconfig context.", rich_help_panel=PANEL),
    kubeconfig: Optional[str] = typer.Option(None, "--kubeconfig", help="kubeconfig file.", rich_help_panel=PANEL),
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n", help="Only pods of this namespace (NVIDIA components are read everywhere).", rich_help_panel=PANEL),
    pod: Optional[str] = typer.Option(None, "--pod", help="Only this pod (in --namespace, else the context's namespace).", rich_help_panel=PANEL),
    timeout: float = typer.Option(20.0, "--timeout", help="Seconds per API request (read; connect is at most 5).", rich_help_panel=PANEL),
    images: bool = typer.Option(False, "--images", help="Also read the config of the images GPU-node pods run (their env), config-only, through the cache."),
    format: str = typer.Option("text", "--format", help="text or json."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the report to this file instead of stdout."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also say what each finding means and where that comes from."),
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
        if timeout <= 0:
            raise UsageError("--timeout must be a positive number of seconds")
        with connect(context, kubeconfig, (min(5.0, timeout), timeout)) as conn:
            options = DoctorOptions(namespace=namespace or (conn.namespace if pod else None), pod=pod)
            image_envs = None
            if images:
                from imagelint.doctor.images import image_env_reader

                image_envs = image_env_reader(timeout)
            report = run_doctor(conn, options, image_envs=image_envs)
        text = render_json(report) if format == "json" else render_text(report, verbose=verbose)
        if output is not None:
            try:
                output.write_text(text, encoding="utf-8")
            except OSError as exc:
                raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from None
        else:
            typer.echo(text, nl=False)
    except ImagelintError as exc:
        raise fail(exc) from None
    raise typer.Exit(report.exit_code)
