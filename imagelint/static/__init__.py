"""Static inputs: files in a repository (Dockerfiles, Kubernetes manifests, app configs, scripts).

``imagelint lint`` reads these without network access and turns each into the
same ``ImageFacts`` model the image path produces, so the same rules report
the same problems. Modules:

  ``detect``      which kind of file a path is (by name, then by content)
  ``words``       Dockerfile quoting and ``$VAR`` / ``${VAR:-default}`` expansion
  ``dockerfile``  the Dockerfile parser (directives, continuations, heredocs, stages)
  ``dockerfile_facts``  a parsed Dockerfile's final stage → ``ImageFacts``
  ``yamlsafe``    bounded YAML loading that keeps line numbers
  ``kubernetes``  workloads in manifests → one ``ImageFacts`` per container
  ``driverlibs``  driver-library names (from ``matrices/driver-libraries.toml``) for COPY/ADD
  ``gpuscan``     GPU-index/capability scanning, reusing ``imagelint.facts`` scanners
  ``scheduling``  ``lint --image``: the pools a manifest's GPU workloads can reach

The orchestration (files → facts → the rules engine → results) is ``imagelint.core.lint``: it
sits above these readers, beside ``check``.
"""
