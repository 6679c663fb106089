"""``imagelint doctor [--cluster | --from PATH]``: flags → an object source (the live cluster of the
kubeconfig's current context, or a dump) → ``imagelint.doctor.run_doctor`` → text/JSON → exit code.

Exit codes: 0 healthy (every stage was read and is ok), 1 problems found, 2 usage, 3 the
cluster could not be read (kubeconfig, TLS, 401, a dead server), 5 no problem seen but a stage
that decides health could not be read (never a pass).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import typer

from imagelint.cli.choices import TEXT_OR_JSON, choose
from imagelint.cli.failure import fail
from imagelint.cli.help import epilog, examples, exit_codes
from imagelint.cli.source_options import with_source_options
from imagelint.errors import EXIT_INCOMPLETE, ImagelintError, UsageError

if TYPE_CHECKING:
    from imagelint.sources import SourceOptions

app = typer.Typer()

EPILOG = epilog(
    examples(
        "imagelint doctor                       # the kubeconfig's current context, as kubectl",
        "imagelint doctor --from cluster-dump/   # kubectl cluster-info dump --output-directory cluster-dump",
        "kubectl get nodes,pods,events,daemonsets -A -o yaml | imagelint doctor --from -",
        "imagelint doctor --cluster -n ml --pod trainer-0 --verbose",
        "imagelint doctor --cluster --images --format json --output doctor.json",
    ),
    exit_codes((0, "healthy: every stage was read and is ok"), (1, "problems found"), (2, "usage error"),
               (3, "the cluster could not be read (kubeconfig, TLS, 401, a dead server), or the run reached --deadline"),
               (EXIT_INCOMPLETE, "not all checked: no problem seen, but a stage that decides health could not be read")),
)


@app.command("doctor", epilog=EPILOG)
@with_source_options
def doctor_command(
    cluster: bool = typer.Option(False, "--cluster", help="Diagnose the live cluster (kubeconfig or in-cluster); the default without --from."),
    dump: Optional[str] = typer.Option(None, "--from", help="Diagnose a dump instead: kubectl get -o yaml/json output, a cluster-info dump or GPU Operator must-gather directory, or - (stdin)."),
    context: Optional[str] = typer.Option(None, "--context", help="kubeconfig context."),
    kubeconfig: Optional[str] = typer.Option(None, "--kubeconfig", help="kubeconfig file."),
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n", help="Only pods of this namespace (NVIDIA components are read everywhere)."),
    pod: Optional[str] = typer.Option(None, "--pod", help="Only this pod (in --namespace, else the context's namespace)."),
    images: bool = typer.Option(False, "--images", help="Also read the images GPU-node pods run (config only, through the cache): their env for isolation, check's rules for stage 5."),
    format: str = typer.Option("text", "--format", help="text or json."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the report to this file instead of stdout."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also say what each finding means and where that comes from."),
    *,
    source_options: SourceOptions,
) -> None:
    """Say, stage by stage, why GPU pods stay Pending, fail to start or share a GPU — and what to change."""
    from imagelint.doctor import DoctorOptions, run_doctor
    from imagelint.doctor.render import render_json, render_text

    try:
        if dump is not None and (cluster or context or kubeconfig):
            raise UsageError("--from reads a dump: it does not go with --cluster, --context or --kubeconfig")
        format = choose(format, TEXT_OR_JSON, "--format")
        timeout = source_options.timeout  # --timeout: per API request too (connect at most 5 s)
        with _source(dump, context, kubeconfig, timeout) as conn:
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
            typer.echo(text, nl=False)
    except ImagelintError as exc:
        raise fail(exc) from None
    raise typer.Exit(report.exit_code)


def _source(dump: str | None, context: str | None, kubeconfig: str | None, timeout: float):  # -> ObjectSource
    """The dump when ``--from`` names one, else the cluster of the kubeconfig's (current) context."""
    if dump is not None:
        from imagelint.cluster.dump_formats import read_dump

        return read_dump(dump)
    from imagelint.cluster.connection import connect

    return connect(context, kubeconfig, (min(5.0, timeout), timeout))
