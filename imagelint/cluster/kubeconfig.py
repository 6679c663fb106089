"""Where the cluster is and who we are: a kubeconfig context (exec plugins included) or in-cluster config.

``load_client_configuration`` returns a ``kubernetes.client.Configuration`` and the
context's name and namespace. Every failure is a one-line ``ClusterError`` (exit 3)
naming the kubeconfig, never its contents: a kubeconfig holds credentials.
``--context`` without a kubeconfig is a ``UsageError`` (exit 2). A file that is not a
kubeconfig at all (not YAML, a list, a context that is a string) is the same one-line
``ClusterError``, never an internal error.

Exec credential plugins (``users[].user.exec``) run bounded: within ``--timeout`` (and the
run's deadline), stdout read up to 1 MiB, stderr never echoed raw, not interactive. The
kubernetes client's own runner waits forever and logs a failure on the root logger
(``ERROR:root:...``) before going on without credentials; here a failing plugin is one
line naming the plugin and how it failed.
"""

from __future__ import annotations

import os
from typing import Any

from imagelint.errors import ClusterError, UsageError
from dataclasses import dataclass

_SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


@dataclass(frozen=True)
class ClientConfiguration:
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
    import logging

    import yaml
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    _install_bounded_exec_provider()
    _plugin.timeout = timeout
    _plugin.failure = None
    configuration = client.Configuration()
    paths = kubeconfig_paths(kubeconfig)
    existing = [p for p in paths if os.path.exists(p)]
    namespace = "default"
    if kubeconfig and not existing:
        raise ClusterError(f"kubeconfig {kubeconfig}: no such file")
    for path in existing:  # a FIFO or device would block the client's plain open()
        if not os.path.isfile(path):
            raise ClusterError(f"kubeconfig {path}: not a regular file")
    logging.disable(logging.CRITICAL)  # the client logs exec failures on the root logger; we say them once
    try:
        if existing:
            config_file = kubeconfig or os.pathsep.join(existing)
            config.load_kube_config(
                config_file=config_file, context=context, client_configuration=configuration, persist_config=False
            )
            if _plugin.failure:
                raise ClusterError(f"kubeconfig {kubeconfig or ', '.join(existing)}: {_plugin.failure}")
            contexts, active = config.list_kube_config_contexts(config_file=config_file)
            chosen = next((c for c in contexts if c.get("name") == context), active) if context else active
            context_name = (chosen or {}).get("name") or "current-context"
            namespace = ((chosen or {}).get("context") or {}).get("namespace") or "default"
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
    except ConfigException as exc:
        where = kubeconfig or ", ".join(existing) or "in-cluster config"
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        raise ClusterError(f"kubeconfig {where}: {first_line[:200]}") from None
    except yaml.YAMLError as exc:
        where = kubeconfig or ", ".join(existing) or "in-cluster config"
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1})" if mark is not None else ""
        raise ClusterError(f"kubeconfig {where}: not YAML{at}") from None
    except (OSError, ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
        # unreadable file, bad base64 data, a document of the wrong shape (a list, a string context...)
        where = kubeconfig or ", ".join(existing) or "in-cluster config"
        raise ClusterError(f"kubeconfig {where}: cannot load ({exc.__class__.__name__}: not a kubeconfig of the usual shape)") from None
    finally:
        logging.disable(logging.NOTSET)
    return ClientConfiguration(configuration=configuration, context=context_name, namespace=namespace)


class _PluginState:
    """The bound for exec plugins in this process and the last failure (kube_config swallows
    the exception our runner raises, so the failure is read from here afterwards)."""

    timeout: float = 30.0
    failure: str | None = None


_plugin = _PluginState()
_installed = False


def _install_bounded_exec_provider() -> None:
    """Swap the kubernetes client's ExecProvider for one that runs the plugin bounded (also for
    the token refreshes the client does later through the same name)."""
    global _installed
    if _installed:
        return
    from kubernetes.config import kube_config
    from kubernetes.config.exec_provider import ExecProvider

    class BoundedExecProvider(ExecProvider):  # type: ignore[misc]
        def run(self, previous_response: Any = None) -> Any:
            import json

            from imagelint.deadline import bounded
            from imagelint.subprocess_bounded import HelperFailure, one_line, run_bounded

            info: dict[str, Any] = {"apiVersion": self.api_version, "kind": "ExecCredential",
                                    "spec": {"interactive": False}}
            if previous_response:
                info["spec"]["response"] = previous_response
            if self.cluster:
                info["spec"]["cluster"] = self.cluster.value
            env = dict(self.env, KUBERNETES_EXEC_INFO=json.dumps(info))
            name = os.path.basename(str(self.args[0]))[:60]
            try:
                result = run_bounded([str(a) for a in self.args], timeout=bounded(_plugin.timeout), env=env, cwd=self.cwd)
            except HelperFailure as failure:
                return self._fail(f"exec credential plugin {name!r} failed: {failure.detail}")
            if result.returncode != 0:
                said = one_line(result.stderr, 120)
                return self._fail(f"exec credential plugin {name!r} exited with status {result.returncode}"
                                  + (f" ({said})" if said and not _has_secret_shape(said) else ""))
            try:
                data = json.loads(result.stdout)
            except (ValueError, UnicodeDecodeError):
                data = None
            if not isinstance(data, dict) or not isinstance(data.get("status"), dict):
                return self._fail(f"exec credential plugin {name!r} answered something other than an ExecCredential")
            if data.get("apiVersion") != self.api_version:
                return self._fail(f"exec credential plugin {name!r} answered apiVersion "
                                  f"{str(data.get('apiVersion'))[:40]!r}, not {self.api_version!r}")
            return data["status"]

        def _fail(self, message: str) -> Any:
            _plugin.failure = message
            raise RuntimeError(message)  # kube_config catches it and goes on; load_client_configuration reports

    kube_config.ExecProvider = BoundedExecProvider
    _installed = True


def _has_secret_shape(text: str) -> bool:
    # A plugin's stderr may echo a token; a long unbroken run of token characters is not shown.
    import re

    return re.search(r"[A-Za-z0-9_\-\.=+/]{32,}", text) is not None


__all__ = ["ClientConfiguration", "kubeconfig_paths", "load_client_configuration"]
