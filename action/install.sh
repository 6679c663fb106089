#!/usr/bin/env bash
# "Install imagelint" step of action.yml: install imagelint from the action's own checkout into a
# private virtualenv, so neither the job's Python nor later steps are changed.
set -euo pipefail
: "${ACTION_PATH:?ACTION_PATH must name the action checkout}"
: "${IMAGELINT_VENV:?IMAGELINT_VENV must name the virtualenv directory}"

write_version() {  # the installed version, for the layer cache's key (action.yml)
  local version
  version=$("$IMAGELINT_VENV/bin/python" -c 'import imagelint; print(imagelint.__version__)') || return 1
  case "$version" in
    *[!A-Za-z0-9.+_-]* | "") echo "::error title=imagelint action::unexpected imagelint version"; return 1 ;;
  esac
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    echo "version=$version" >>"$GITHUB_OUTPUT"
  fi
}

if [ -x "$IMAGELINT_VENV/bin/imagelint" ]; then
  write_version
  exit $?  # installed by an earlier use of the action in this job
fi
python=""
for candidate in python3 python; do
  if command -v "$candidate" >/dev/null 2>&1 &&
     "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
    python=$(command -v "$candidate")
    break
  fi
done
if [ -z "$python" ]; then
  echo "::error title=imagelint action::imagelint needs Python >= 3.10 on the runner (add actions/setup-python before this step)"
  exit 2
fi
"$python" -m venv "$IMAGELINT_VENV"
"$IMAGELINT_VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$ACTION_PATH"
"$IMAGELINT_VENV/bin/imagelint" --version
write_version
