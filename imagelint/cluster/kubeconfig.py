"""Where the cluster is and who we are: a kubeconfig context (exec plugins included) or in-cluster config.

``load_client_configuration`` returns a ``kubernetes.client.Configuration`` and the
context's name and namespace. Every failure is a one-line ``ClusterError`` (exit 3)
naming the kubeconfig, never its contents: a kubeconfig holds credentials.
``--context`` without a kubeconfig is a ``UsageError`` (exit 2).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from imagelint.errors import ClusterError, UsageError

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


def load_client_configuration(context: str | None, kubeconfig: str | None) -> ClientConfiguration:
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    configuration = client.Configuration()
    paths = kubeconfig_paths(kubeconfig)
    existing = [p for p in paths if os.path.exists(p)]
    namespace = "default"
    if kubeconfig and not existing:
        raise ClusterError(f"kubeconfig {kubeconfig}: no such file")
    try:
        if existing:
            config_file = kubeconfig or os.pathsep.join(existing)
            config.load_kube_config(
                config_file=config_file, context=context, client_configuration=configuration, persist_config=False
            )
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
    except (OSError, ValueError, TypeError) as exc:  # unreadable file, bad base64 data, exec plugin failure
        where = kubeconfig or ", ".join(existing) or "in-cluster config"
        raise ClusterError(f"kubeconfig {where}: cannot load ({exc.__class__.__name__})") from None
    return ClientConfiguration(configuration=configuration, context=context_name, namespace=namespace)


__all__ = ["ClientConfiguration", "kubeconfig_paths", "load_client_configuration"]
