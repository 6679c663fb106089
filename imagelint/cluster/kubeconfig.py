"""Where the cluster is and who we are: a kubeconfig context (exec plugins included) or in-cluster config.

``load_client_configuration`` returns a ``kubernetes.client.Configuration`` and the
context's name and namespace. Every failure is a one-line ``ClusterError`` (exit 3)
naming the kubeconfig, never its contents: a kubeconfig holds credentials.
``--context`` without a kubeconfig is a ``UsageError`` (exit 2). A file that is not a
kubeconfig at all (not YAML, a list, a context that is a string) is the same one-line
``ClusterError``, never an internal error.

Exec credential plugins (``users[].user.exec``) run bounded: within ``--timeout`` (and the
run's deadline), stdout read up to 1 MiB, not interactive, through a loader of our own
that subclasses the client's ``KubeConfigLoader`` (the client's module is left as it is).
A failing plugin is one line naming the plugin and how it failed; its stderr and the values
of its ``env`` are never shown. The client's own runner waits forever and logs a failure on
the root logger before going on without credentials.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from imagelint.errors import ClusterError, UsageError
from imagelint.untrusted import loads_json

_SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
# kubeconfigs are kilobytes; a larger file is refused before the client's YAML loader reads it.
MAX_KUBECONFIG_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class ClientConfiguration:
    """How to reach the cluster and as whom: a kubeconfig context's client configuration, or in-cluster."""

    configuration: Any  # kubernetes.client.Configuration
    context: str  # context name, or "in-cluster"
    namespace: str  # the context's namespace (or the pod's)


def kubeconfig_paths(kubeconfig: str | None) -> list[str]:
    """``--kubeconfig``, else every file in ``$KUBECONFIG``, else ``~/.kube/config`` (kubectl's order)."""
    if kubeconfig:
        return [kubeconfig]
    env = os.environ.get("KUBECONFIG")
    if env:
        return [p for p in env.split(os.pathsep) if p]
    return [os.path.expanduser("~/.kube/config")]


def load_client_configuration(context: str | None, kubeconfig: str | None, timeout: float = 30.0) -> ClientConfiguration:
    import yaml
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    configuration = client.Configuration()
    paths = kubeconfig_paths(kubeconfig)
    existing = [p for p in paths if os.path.exists(p)]
    namespace = "default"
    if kubeconfig and not existing:
        raise ClusterError(f"kubeconfig {kubeconfig}: no such file")
    for path in existing:  # a FIFO or device would block the client's plain open()
        if not os.path.isfile(path):
            raise ClusterError(f"kubeconfig {path}: not a regular file")
        if os.path.getsize(path) > MAX_KUBECONFIG_BYTES:
            raise ClusterError(f"kubeconfig {path}: larger than {MAX_KUBECONFIG_BYTES // (1024 * 1024)} MiB; not a kubeconfig")
    where = kubeconfig or ", ".join(existing) or "in-cluster config"
    try:
        if existing:
            config_file = kubeconfig or os.pathsep.join(existing)
            loader = _bounded_loader(config_file, context, timeout)
            loader.load_and_set(configuration)
            chosen = loader.current_context or {}
            context_name = chosen.get("name") or "current-context"
            namespace = (chosen.get("context") or {}).get("namespace") or "default"
        elif os.environ.get("KUBERNETES_SERVICE_HOST"):
            if context:
                raise UsageError("--context needs a kubeconfig; none found and running in-cluster")
            config.load_incluster_config(client_configuration=configuration)
            context_name = "in-cluster"
            try:
                with open(_SERVICE_ACCOUNT_NAMESPACE, encoding="utf-8") as handle:
                    namespace = handle.read().strip() or "default"
            except OSError:
                pass
        else:
            raise ClusterError(f"no kubeconfig ({', '.join(paths)} not found) and not running inside a cluster")
    except ExecPluginFailure as failure:
        raise ClusterError(f"kubeconfig {where}: {failure}") from None
    except ConfigException as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        raise ClusterError(f"kubeconfig {where}: {first_line[:200]}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1})" if mark is not None else ""
        raise ClusterError(f"kubeconfig {where}: not YAML{at}") from None
    except RecursionError:
        raise ClusterError(f"kubeconfig {where}: nested too deeply to be a kubeconfig") from None
    except (OSError, ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
        # unreadable file, bad base64 data, a document of the wrong shape (a list, a string context...)
        raise ClusterError(f"kubeconfig {where}: cannot load ({exc.__class__.__name__}: not a kubeconfig of the usual shape)") from None
    return ClientConfiguration(configuration=configuration, context=context_name, namespace=namespace)


class ExecPluginFailure(Exception):
    """An exec credential plugin that hung, flooded, failed or answered no ExecCredential."""


def _bounded_loader(config_file: str, context: str | None, timeout: float) -> Any:
    """The kubernetes client's own loader for these files, with exec plugins run bounded.

    The loader calls ``_load_from_exec_plugin`` at load time and again from the token-refresh
    hook it installs on the configuration, so both go through ``_run_exec_plugin``. Its own
    runner waits forever, logs failures on the root logger and goes on without credentials.
    """
    from kubernetes.config.kube_config import KubeConfigLoader, KubeConfigMerger

    class BoundedExecLoader(KubeConfigLoader):
        def _load_from_exec_plugin(self) -> bool | None:
            user, cluster = self._user, self._cluster
            # The loader asks only for a context with a user and a cluster (without a user it
            # returns before asking); None is the loader's "not set yet".
            if user is None or cluster is None or "exec" not in user:
                return None
            base_path = self._get_base_path(cluster.path)
            status = _run_exec_plugin(user["exec"], base_path, cluster, timeout)
            if "token" in status:
                self.token = f"Bearer {status['token']}"
            elif "clientCertificateData" in status and "clientKeyData" in status:
                from kubernetes.config.kube_config import FileOrData

                for attribute, key in (("cert_file", "clientCertificateData"), ("key_file", "clientKeyData")):
                    setattr(self, attribute, FileOrData(status, None, data_key_name=key, file_base_path=base_path,
                                                        base64_file_content=False).as_file())
            else:
                raise ExecPluginFailure(f"exec credential plugin {_plugin_name(user['exec'])!r} answered "
                                        "neither a token nor a client certificate and key")
            if "expirationTimestamp" in status:
                from kubernetes.config.dateutil import parse_rfc3339

                self.expiry = parse_rfc3339(status["expirationTimestamp"])
            return True

    merged = KubeConfigMerger(config_file)
    if merged.config is None:
        from kubernetes.config.config_exception import ConfigException

        raise ConfigException("Invalid kube-config file. No configuration found.")
    return BoundedExecLoader(config_dict=merged.config, active_context=context, config_base_path=None)


def _plugin_name(exec_config: Any) -> str:
    command = exec_config["command"] if "command" in exec_config else ""
    return os.path.basename(str(command))[:60]


def _run_exec_plugin(exec_config: Any, base_path: str | None, cluster: Any, timeout: float) -> dict[str, Any]:
    """Run a ``users[].user.exec`` plugin as kubectl does (client-go's ExecCredential protocol),
    bounded in time and output and never interactive; return its ``status``.

    A failure says which plugin and how it failed, never what it wrote on stderr nor its
    ``env`` values: an OIDC or cloud helper's error output can carry its client secret.
    """
    import json

    from kubernetes.config.exec_provider import ExecProvider

    from imagelint.deadline import bounded
    from imagelint.subprocess_bounded import HelperFailure, run_bounded

    name = _plugin_name(exec_config)
    try:  # the client's own reading of the exec section: command, args, env, apiVersion, cwd
        provider = ExecProvider(exec_config, base_path, cluster)
    except Exception as exc:  # the client raises ConfigException or a KeyError for a malformed section
        raise ExecPluginFailure(f"exec credential plugin {name!r}: malformed exec section ({exc.__class__.__name__})") from None
    info: dict[str, Any] = {"apiVersion": provider.api_version, "kind": "ExecCredential", "spec": {"interactive": False}}
    if provider.cluster:
        info["spec"]["cluster"] = provider.cluster.value
    env = dict(provider.env, KUBERNETES_EXEC_INFO=json.dumps(info))
    try:
        result = run_bounded([str(a) for a in provider.args], timeout=bounded(timeout), env=env, cwd=provider.cwd)
    except HelperFailure as failure:
        raise ExecPluginFailure(f"exec credential plugin {name!r} failed: {failure.detail}") from None
    if result.returncode != 0:
        raise ExecPluginFailure(f"exec credential plugin {name!r} exited with status {result.returncode} "
                                "(its output is not shown: it may hold credentials; run it yourself to see it)")
    try:
        data = loads_json(result.stdout)
    except (ValueError, UnicodeDecodeError, RecursionError):
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("status"), dict):
        raise ExecPluginFailure(f"exec credential plugin {name!r} answered something other than an ExecCredential")
    if data.get("apiVersion") != provider.api_version:
        raise ExecPluginFailure(f"exec credential plugin {name!r} answered apiVersion "
                                f"{str(data.get('apiVersion'))[:40]!r}, not {provider.api_version!r}")
    status: dict[str, Any] = data["status"]
    return status


__all__ = ["ClientConfiguration", "kubeconfig_paths", "load_client_configuration"]
