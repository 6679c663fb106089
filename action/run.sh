#!/usr/bin/env bash
# "Run imagelint" step of action.yml, kept in a file so it can be tested without a runner.
#
# Inputs arrive only as INPUT_* environment variables of this step and are never evaluated as
# shell code: values are split into words (no globbing, except the `lint` file patterns, which are
# expanded as pathnames only) and passed to imagelint as separate arguments. Results go to
# $GITHUB_OUTPUT (exit-code, findings, sarif-file, json-file); findings become annotations through
# the `github` format, which also appends a table to $GITHUB_STEP_SUMMARY.
set -uo pipefail
set -f

report_dir=${IMAGELINT_REPORT_DIR:-${RUNNER_TEMP:-/tmp}/imagelint-report}
sarif_file=${INPUT_SARIF_FILE:-imagelint.sarif}
json_file="$report_dir/imagelint.json"

write_outputs() {  # exit-code findings
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    {
      echo "exit-code=$1"
      echo "findings=$2"
      echo "sarif-file=$sarif_file"
      echo "json-file=$json_file"
    } >>"$GITHUB_OUTPUT"
  fi
}

fail_input() {
  echo "::error title=imagelint action::$*"
  write_outputs 2 0
  exit 2
}

split_lines() {  # NAME VALUE SEPARATORS: split VALUE on newlines and SEPARATORS into the array NAME, trimmed
  local -n _items=$1
  _items=()
  local item
  while IFS= read -r item; do
    item="${item#"${item%%[![:space:]]*}"}"
    item="${item%"${item##*[![:space:]]}"}"
    [ -n "$item" ] && _items+=("$item")
  done < <(if [ -n "$3" ]; then printf '%s\n' "$2" | tr "$3" '\n'; else printf '%s\n' "$2"; fi)
}

split_words() {  # NAME VALUE: split VALUE on spaces/tabs/newlines into the array NAME
  local -n _words=$1
  _words=()
  local word
  for word in $2; do  # word splitting only: `set -f` keeps '*' and '?' literal
    _words+=("$word")
  done
}

if [ -n "${GITHUB_WORKSPACE:-}" ]; then
  cd "$GITHUB_WORKSPACE" || fail_input "cannot enter GITHUB_WORKSPACE"
fi

# The runner does not expand '~' in env values.
if [ -n "${IMAGELINT_CACHE_DIR:-}" ]; then
  case "$IMAGELINT_CACHE_DIR" in
    "~/"*) IMAGELINT_CACHE_DIR="$HOME/${IMAGELINT_CACHE_DIR#"~/"}" ;;
  esac
  export IMAGELINT_CACHE_DIR
fi

imagelint_bin=imagelint
python_bin=python3
if [ -n "${IMAGELINT_VENV:-}" ] && [ -x "$IMAGELINT_VENV/bin/imagelint" ]; then
  imagelint_bin="$IMAGELINT_VENV/bin/imagelint"
  python_bin="$IMAGELINT_VENV/bin/python"
fi

case "${INPUT_ALL_PLATFORMS:-false}" in
  true | false) ;;
  *) fail_input "all-platforms must be true or false, not '${INPUT_ALL_PLATFORMS}'" ;;
esac
case "${INPUT_CACHE:-on}" in
  on | off) ;;
  *) fail_input "cache must be on or off, not '${INPUT_CACHE}'" ;;
esac
format=${INPUT_FORMAT:-github}
case "$format" in
  github | text | json | junit) ;;
  *) fail_input "format must be github, text, json or junit, not '$format' (SARIF is always written to sarif-file)" ;;
esac

split_words images "${INPUT_IMAGE:-}"
split_words lint_words "${INPUT_LINT:-}"
split_words drivers "${INPUT_DRIVER:-}"
# GPU names hold spaces ("RTX 4090"): one per line or comma. A pool spec holds commas: one per line.
split_lines gpus "${INPUT_GPU:-}" ','
split_lines pools "${INPUT_POOLS:-}" ''
split_words extra "${INPUT_ARGS:-}"

lint_files=()
shopt -s nullglob globstar
for pattern in "${lint_words[@]}"; do
  case "$pattern" in
    *[*?[]*)
      set +f
      matches=($pattern)  # pathname expansion only; the pattern is never run
      set -f
      if [ ${#matches[@]} -eq 0 ]; then
        echo "::warning title=imagelint action::no file matches '$pattern'"
      fi
      lint_files+=("${matches[@]}")
      ;;
    *) lint_files+=("$pattern") ;;
  esac
done
shopt -u nullglob globstar

sub=""
positional=()
options=()
if [ ${#lint_words[@]} -gt 0 ]; then
  if [ ${#lint_files[@]} -eq 0 ]; then
    echo "::notice title=imagelint action::no files to lint"
    write_outputs 0 0
    exit 0
  fi
  sub=lint
  positional=("${lint_files[@]}")
  for image in "${images[@]}"; do
    options+=(--image "$image")
  done
elif [ ${#images[@]} -gt 0 ]; then
  sub=check
  positional=("${images[@]}")
else
  fail_input "give 'image' (images to check) and/or 'lint' (files to lint)"
fi

[ -n "${INPUT_PLATFORM:-}" ] && options+=(--platform "$INPUT_PLATFORM")
[ "${INPUT_ALL_PLATFORMS:-false}" = true ] && options+=(--all-platforms)
for driver in "${drivers[@]}"; do
  options+=(--driver "$driver")
done
for gpu in "${gpus[@]}"; do
  options+=(--gpu "$gpu")
done
[ -n "${INPUT_TOOLKIT:-}" ] && options+=(--toolkit "$INPUT_TOOLKIT")
for pool in "${pools[@]}"; do
  options+=(--pool "$pool")
done
[ -n "${INPUT_DOCKERFILE:-}" ] && options+=(--dockerfile "$INPUT_DOCKERFILE")
[ -n "${INPUT_TARGET_FILE:-}" ] && options+=(--target-file "$INPUT_TARGET_FILE")
[ -n "${INPUT_MATRIX:-}" ] && options+=(--matrix "$INPUT_MATRIX")
[ -n "${INPUT_CONFIG:-}" ] && options+=(--config "$INPUT_CONFIG")
[ -n "${INPUT_FAIL_ON:-}" ] && options+=(--fail-on "$INPUT_FAIL_ON")

mkdir -p "$report_dir" || fail_input "cannot create $report_dir"
sarif_dir=$(dirname -- "$sarif_file")
mkdir -p -- "$sarif_dir" || fail_input "cannot create the directory of sarif-file"
rm -f -- "$json_file"
options+=(--format sarif --output "$sarif_file" --format json --output "$json_file" --format "$format")

# Images and files go after `--`, so a value starting with '-' can never be read as an option.
"$imagelint_bin" "$sub" "${options[@]}" "${extra[@]}" -- "${positional[@]}"
code=$?

findings=0
if [ -s "$json_file" ]; then
  findings=$("$python_bin" - "$json_file" <<'PY'
import json, sys
try:
    summary = json.load(open(sys.argv[1], encoding="utf-8"))["summary"]
    print(sum(int(summary.get(k, 0)) for k in ("error", "warning", "info")))
except Exception:
    print(0)
PY
)
fi
write_outputs "$code" "$findings"
exit "$code"
