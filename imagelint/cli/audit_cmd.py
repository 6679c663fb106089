"""``imagelint audit``: the fleet audit and upgrade planner (core: ``imagelint.audit``).

  imagelint audit --cluster [-n NS | -A] [-l SELECTOR]        what runs now, checked
  imagelint audit --cluster --plan-driver 580.65.06           ... and on a proposed stack (a diff)
  imagelint audit --images FILE --target-file now.toml --plan next.toml    the same, offline
  imagelint audit enumerate --cluster -o inventory.json       the CronJob's step: what runs where
  imagelint audit --images inventory.json --target-file t.toml --shard 0/4 -o part0.json
  imagelint audit merge part*.json [--format ...]             one report, as one unsharded run
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional

import typer

from imagelint.cli.choices import choose
from imagelint.cli.failure import fail
from imagelint.cli.help import epilog, examples, exit_codes
from imagelint.cli.run_options import (
    ConfigOpt,
    FailOnOpt,
    IgnoreOpt,
    MatrixOpt,
    MatrixOverlayOpt,
    SelectOpt,
    write_output,
)
from imagelint.cli.source_options import with_source_options
from imagelint.cli.target_options import with_target_options
from imagelint.deploytarget.options import TargetOptions
from imagelint.errors import ImagelintError, UsageError
from imagelint.untrusted import loads_json

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix
    from imagelint.sources import SourceOptions

EPILOG = epilog(
    examples(
        "imagelint audit --cluster -A                       # what runs now, checked",
        "imagelint audit --cluster --plan-driver 580.65.06  # ... and on a proposed driver",
        "imagelint audit --images images.txt --target-file now.toml --plan next.toml",
        "imagelint audit enumerate --cluster -o inventory.json",
        "imagelint audit --images inventory.json --target-file t.toml --shard 0/4 -f json -o part0.json",
        "imagelint audit merge part*.json --format sarif -o audit.sarif",
    ),
    exit_codes((0, "every image passes (with --plan: the proposed stack breaks none)"),
               (1, "an image fails (with --plan: the proposed stack breaks one)"), (2, "usage or configuration error"),
               (3, "an image or the cluster could not be read, or the run reached --deadline")),
)

app = typer.Typer(
    name="audit",
    help="Audit every image the cluster's workloads run (today, and on a proposed stack with --plan).",
    epilog=EPILOG,
    invoke_without_command=True,
)

FORMATS = ("text", "json", "sarif", "policyreport")
FormatOpt = typer.Option("text", "--format", "-f", help="text, json, sarif or policyreport (YAML for kubectl apply -f -).")
OutputOpt = typer.Option(None, "--output", "-o", help="Write the report to this file (default: stdout).")


def _emit(text: str, output: Optional[str]) -> None:
    if output:
        write_output(output, text)
    else:
        typer.echo(text, nl=False)


def _setup(config: Optional[str], select: Any, ignore: Any, fail_on: Optional[str], matrix: Optional[str],
           matrix_overlay: Any, target_options: TargetOptions) -> Any:
    from imagelint.cli.run_options import prepare_run

    return prepare_run(config_path=config, select=select, ignore=ignore, fail_on=fail_on, matrix=matrix,
                       matrix_overlay=matrix_overlay, no_inline_ignores=False, formats=None, outputs=None,
                       target_options=target_options)


def _inventory(images: Optional[str], target_options: TargetOptions, setup: Any, namespace: Optional[str],
               all_namespaces: bool, selector: Optional[str], use_pull_secrets: bool = False) -> tuple[Any, Any, Any]:
    """(inventory, live target, pull-secret credentials by image) from the cluster or from --images."""
    from imagelint.audit.inventory import (
        image_credentials,
        inventory_from_fleet,
        read_images_file,
    )

    if use_pull_secrets and not target_options.cluster:
        raise UsageError("--use-pull-secrets reads the cluster's image pull secrets: it needs --cluster")
    if images and target_options.cluster:
        raise UsageError("give --cluster or --images, not both (an inventory file was enumerated from a cluster already)")
    if namespace and all_namespaces:
        raise UsageError("give --namespace or --all-namespaces, not both")
    if target_options.cluster:
        if target_options.target_file or target_options.drivers:
            raise UsageError("--cluster audits against the cluster's own pools: drop --target-file/--driver (use --plan for another stack)")
        from imagelint.cluster.fleet import read_fleet

        fleet = read_fleet(target_options.context, target_options.kubeconfig, setup.matrix,
                           None if all_namespaces else namespace, selector, use_pull_secrets=use_pull_secrets)
        return inventory_from_fleet(fleet), fleet.target, image_credentials(fleet) if use_pull_secrets else None
    if namespace or selector:
        raise UsageError("--namespace/--selector choose what to read from a cluster: they need --cluster")
    if not images:
        raise UsageError("nothing to audit: give --cluster, or --images FILE with --target-file/--driver")
    if not setup.target.known:
        raise UsageError("--images needs a target: --target-file FILE or --driver VERSION")
    return read_images_file(images, setup.target), setup.target, None


@app.callback()
@with_target_options
@with_source_options
def audit_command(
    ctx: typer.Context,
    images: Optional[str] = typer.Option(None, "--images", help="An inventory JSON (audit enumerate) or a file of image references, one a line."),
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n", help="Only this namespace (with --cluster)."),
    all_namespaces: bool = typer.Option(False, "--all-namespaces", "-A", help="Every namespace (the default with --cluster)."),
    selector: Optional[str] = typer.Option(None, "--selector", "-l", help="Label selector for pods and workloads (with --cluster)."),
    plan: Optional[str] = typer.Option(None, "--plan", help="A target file of the proposed stack: report what breaks and what is fixed."),
    plan_driver: Optional[str] = typer.Option(None, "--plan-driver", help="Proposed driver version for every pool of the live target."),
    plan_toolkit: Optional[str] = typer.Option(None, "--plan-toolkit", help="Proposed container toolkit version for every pool."),
    plan_device_plugin: Optional[str] = typer.Option(None, "--plan-device-plugin", help="Proposed device plugin version for every pool."),
    shard: Optional[str] = typer.Option(None, "--shard", help="INDEX/COUNT (from 0): check only this shard of the images (default: $JOB_COMPLETION_INDEX/$IMAGELINT_SHARDS)."),
    jobs: int = typer.Option(4, "--jobs", "-j", min=1, max=64, help="Images read at a time."),
    write_reports: bool = typer.Option(False, "--write-reports", help="Create or update one PolicyReport per namespace in the cluster (needs --cluster)."),
    use_pull_secrets: bool = typer.Option(False, "--use-pull-secrets", help="Read images with the registry credentials in the image pull secrets their pods name (kept in memory, sent only to their registry)."),
    config_only: bool = typer.Option(False, "--config-only", help="Do not read layers (config-based rules only)."),
    format: str = FormatOpt,
    output: Optional[str] = OutputOpt,
    matrix: MatrixOpt = None,
    matrix_overlay: MatrixOverlayOpt = None,
    config: ConfigOpt = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    fail_on: FailOnOpt = None,
    *,
    source_options: SourceOptions,
    target_options: TargetOptions,
) -> None:
    """Check every image the workloads run against the pools each can land on; exit 1 when one fails
    (with --plan: when the proposed stack breaks one), 3 when an image could not be read."""
    if ctx.invoked_subcommand is not None:
        return
    from imagelint.audit import exit_code, plan_exit_code
    from imagelint.audit.run import run_audit
    from imagelint.audit.shard import shard_from

    try:
        format = choose(format, FORMATS, "--format")
        if output:  # a FIFO or device as the report: refused before the audit runs
            from imagelint.report.output import check_report_path

            check_report_path(output)
        if plan and (plan_driver or plan_toolkit or plan_device_plugin):
            raise UsageError("give --plan FILE or --plan-driver/--plan-toolkit/--plan-device-plugin, not both")
        if write_reports and not target_options.cluster:
            raise UsageError("--write-reports writes to the cluster: it needs --cluster")
        the_shard = shard_from(shard)
        if write_reports and the_shard:
            raise UsageError("--write-reports needs the whole audit: write them from `imagelint audit merge --write-reports`")
        setup = _setup(config, select, ignore, fail_on, matrix, matrix_overlay,
                       _without_cluster(target_options, matrix))
        inventory, target, credentials = _inventory(images, target_options, setup, namespace, all_namespaces, selector,
                                                    use_pull_secrets)
        report = run_audit(inventory, target, setup.matrix, setup.config, source_options, shard=the_shard, jobs=jobs,
                           read_layers=not config_only, credentials=credentials)
        proposed_target = _proposed(plan, plan_driver, plan_toolkit, plan_device_plugin, target, setup.matrix)
        if proposed_target is not None:
            from imagelint.audit.plan import diff

            proposed = run_audit(inventory, proposed_target, setup.matrix, setup.config, source_options,
                                 shard=the_shard, jobs=jobs, read_layers=not config_only, credentials=credentials)
            the_plan = diff(report, proposed)
            code = plan_exit_code(the_plan)
            _emit(_render_plan(the_plan, format, code), output)
        else:
            _emit(_render(report, format, exit_code(report)), output)
            code = exit_code(report)
        if write_reports:
            code = _write_reports(report, target_options, code)
    except ImagelintError as exc:
        raise fail(exc) from None
    raise typer.Exit(code)


def _without_cluster(options: TargetOptions, matrix: Optional[str]) -> TargetOptions:
    """The flags prepare_run builds a target from: audit reads the cluster itself (read_fleet).
    ``--context``/``--kubeconfig`` stay when the matrix comes from the cluster (``--matrix cluster``)."""
    import dataclasses

    from imagelint.matrix.loader import is_cluster_matrix_selector

    if not options.cluster:
        return options
    if is_cluster_matrix_selector(matrix):
        return dataclasses.replace(options, cluster=False)
    return dataclasses.replace(options, cluster=False, context=None, kubeconfig=None)


def _proposed(plan: Optional[str], driver: Optional[str], toolkit: Optional[str], device_plugin: Optional[str],
              target: Any, matrix: Matrix | None) -> Any:
    if plan:
        from imagelint.deploytarget.file import load_target_file

        return load_target_file(plan, matrix)
    if driver or toolkit or device_plugin:
        from imagelint.audit.plan import proposed_target

        return proposed_target(target, matrix, driver=driver, toolkit=toolkit, device_plugin=device_plugin)
    return None


def _render(report: Any, fmt: str, code: int) -> str:
    if fmt == "json":
        from imagelint.audit.jsonout import render_json

        return render_json(report)
    if fmt == "sarif":
        from imagelint.audit.sarif import render_sarif

        return render_sarif(report, code)
    if fmt == "policyreport":
        from imagelint.audit.policyreport import render_policy_reports

        return render_policy_reports(report)
    from imagelint.audit.text import render_text

    return render_text(report)


def _render_plan(the_plan: Any, fmt: str, code: int) -> str:
    if fmt == "json":
        from imagelint.audit.jsonout import dumps
        from imagelint.audit.plan import plan_to_json

        return dumps(plan_to_json(the_plan))
    if fmt == "sarif":
        from imagelint.audit.sarif import render_plan_sarif

        return render_plan_sarif(the_plan, code)
    if fmt != "text":
        raise UsageError(f"--plan reports as text, json or sarif, not {fmt} (PolicyReports describe what runs now)")
    from imagelint.audit.text import render_plan_text

    return render_plan_text(the_plan)


def _write_reports(report: Any, target_options: TargetOptions, code: int) -> int:
    """Write the PolicyReports; the audit's own exit code stands (a report not written is said on
    stderr, and makes a passing run exit 3: never a silent pass)."""
    from imagelint.audit.policyreport import policy_reports
    from imagelint.cluster.connection import connect
    from imagelint.cluster.policy_reports import write_policy_reports
    from imagelint.errors import EXIT_OK, EXIT_UNREADABLE

    with connect(target_options.context, target_options.kubeconfig) as conn:
        written = write_policy_reports(conn, policy_reports(report))
    for w in written:
        typer.echo(f"imagelint: {w}", err=True)
    return EXIT_UNREADABLE if code == EXIT_OK and any(w.failed for w in written) else code


@app.command("enumerate", epilog=EPILOG)
@with_target_options
def enumerate_command(
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n", help="Only this namespace."),
    all_namespaces: bool = typer.Option(False, "--all-namespaces", "-A", help="Every namespace (the default)."),
    selector: Optional[str] = typer.Option(None, "--selector", "-l", help="Label selector for pods and workloads."),
    output: Optional[str] = OutputOpt,
    matrix: MatrixOpt = None,
    *,
    target_options: TargetOptions,
) -> None:
    """Write what runs where (an inventory JSON for `audit --images`): the Indexed Job's input."""
    from imagelint.audit.inventory import inventory_to_json
    from imagelint.audit.jsonout import dumps

    try:
        if not target_options.cluster:
            raise UsageError("audit enumerate reads a cluster: give --cluster")
        setup = _setup(None, None, None, None, matrix, None, _without_cluster(target_options, matrix))
        inventory, _, _ = _inventory(None, target_options, setup, namespace, all_namespaces, selector)
        _emit(dumps(inventory_to_json(inventory)), output)
    except ImagelintError as exc:
        raise fail(exc) from None


@app.command("merge", epilog=EPILOG)
def merge_command(
    parts: List[str] = typer.Argument(..., help="The shards' JSON reports (audit --shard I/N --format json)."),
    format: str = FormatOpt,
    output: Optional[str] = OutputOpt,
    write_reports: bool = typer.Option(False, "--write-reports", help="Create or update the PolicyReports in the cluster."),
    context: Optional[str] = typer.Option(None, "--context", help="kubeconfig context for --write-reports."),
    kubeconfig: Optional[str] = typer.Option(None, "--kubeconfig", help="kubeconfig file for --write-reports."),
) -> None:
    """Combine the shards of one audit (or plan) into the report one unsharded run writes."""
    from imagelint.audit import exit_code, plan_exit_code
    from imagelint.audit.jsonout import MAX_PART_BYTES, report_from_json
    from imagelint.audit.plan import PLAN_SCHEMA, diff, reports_from_plan_json
    from imagelint.audit.shard import merge_reports

    try:
        format = choose(format, FORMATS, "--format")
        if output:  # a FIFO or device as the report: refused before the audit runs
            from imagelint.report.output import check_report_path

            check_report_path(output)
        loaded = [_read_json(p, MAX_PART_BYTES) for p in parts]
        if all(isinstance(d, dict) and d.get("schema") == PLAN_SCHEMA for d in loaded):
            pairs = [reports_from_plan_json(d, p) for d, p in zip(loaded, parts)]
            the_plan = diff(merge_reports([c for c, _ in pairs], parts), merge_reports([q for _, q in pairs], parts))
            code = plan_exit_code(the_plan)
            _emit(_render_plan(the_plan, format, code), output)
            report = the_plan.current
        else:
            report = merge_reports([report_from_json(d, p) for d, p in zip(loaded, parts)], parts)
            code = exit_code(report)
            _emit(_render(report, format, code), output)
        if write_reports:
            code = _write_reports(report, TargetOptions(cluster=True, context=context, kubeconfig=kubeconfig), code)
    except ImagelintError as exc:
        raise fail(exc) from None
    raise typer.Exit(code)


def _read_json(path: str, limit: int) -> Any:
    from imagelint.localfile import read_regular_file

    try:  # a regular file only (a FIFO never blocks the run), and no larger than the cap
        data = read_regular_file(path, limit)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return loads_json(data.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError, or loads_json's one-line refusal
        raise UsageError(f"{path}: not JSON ({exc})") from None


__all__ = ["app"]
