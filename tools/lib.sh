# Shared by the scripts in tools/: source it after setting `me` (the name
# the script's messages start with).

# Exits 77 (what ctest reports as skipped), saying why, unless run as root.
skip_unless_root() {
  if [[ $(id -u) -ne 0 ]]; then
    echo "$me: skipped: $1 needs root, and this runs as $(id -un)"
    exit 77
  fi
}

# Exits 1 naming the first of the given commands that is missing.
require_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$me: $tool is missing (bash tools/setup.sh installs it)" >&2; exit 1; }
  done
}
