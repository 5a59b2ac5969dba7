# Sourced by the scripts here: make .venv (once) and install hpinsight with its test extras.
# The install is editable, so source changes need none: it is redone only when the venv is
# new, when pyproject.toml, the Python version or the install command below changed, or
# when hpinsight is not installed from this checkout (.venv/.hpinsight-install-state
# records the state of the last install that succeeded).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
_hpinsight_state() {
  # prints a hash of what the install depends on; fails when hpinsight is not installed
  # from this checkout (-I: the environment and the working directory do not count)
  .venv/bin/python -I - "$@" <<'EOF'
import hashlib, importlib.util, pathlib, sys
spec = importlib.util.find_spec("hpinsight")
origin = pathlib.Path(spec.origin).resolve() if spec and spec.origin else None
if origin is None or origin.parent != (pathlib.Path("src") / "hpinsight").resolve():
    sys.exit(f"hpinsight is not installed from this checkout (found: {origin})")
state = hashlib.sha256()
for part in (pathlib.Path("pyproject.toml").read_bytes(), sys.version.encode(),
             "\0".join(sys.argv[1:]).encode()):
    state.update(part + b"\0")
print(state.hexdigest())
EOF
}
_hpinsight_install=(-e ".[dev]")
_hpinsight_stamp=.venv/.hpinsight-install-state
_hpinsight_now=$(_hpinsight_state "${_hpinsight_install[@]}" 2>/dev/null || true)
if [ -z "$_hpinsight_now" ] || [ "$_hpinsight_now" != "$(cat "$_hpinsight_stamp" 2>/dev/null || true)" ]; then
  rm -f "$_hpinsight_stamp"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "${_hpinsight_install[@]}"
  _hpinsight_now=$(_hpinsight_state "${_hpinsight_install[@]}")
  printf '%s\n' "$_hpinsight_now" > "$_hpinsight_stamp"
fi
unset -f _hpinsight_state
unset _hpinsight_install _hpinsight_stamp _hpinsight_now
