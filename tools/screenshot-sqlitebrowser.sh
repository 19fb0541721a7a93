#!/usr/bin/env bash
# The README's picture of DB Browser for SQLite: the bundled sample recorded
# into a database, opened read-only on a view under Xvfb, the screen saved
# as a PNG.
#
#   bash tools/screenshot-sqlitebrowser.sh [--etwaudit EXE] [--view NAME] [--output FILE]
set -euo pipefail
cd "$(dirname "$0")/.."

etwaudit=build/etwaudit
view=v_file_totals
output=doc/sqlitebrowser.png
while (($#)); do
  case "$1" in
    --etwaudit) etwaudit=$2; shift 2 ;;
    --view) view=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    *) echo "usage: $0 [--etwaudit EXE] [--view NAME] [--output FILE]" >&2; exit 2 ;;
  esac
done
bash tools/install-packages.sh sqlitebrowser xvfb xauth x11-apps netpbm xdotool

work=$(mktemp -d)
trap 'kill -- "-$browser" 2>/dev/null || true; rm -rf "$work"' EXIT
browser=
"$etwaudit" collect --db "$work/audit.db" --source replay:tools/sample/events.jsonl --quiet 2>/dev/null

export QT_QPA_PLATFORM=xcb XDG_RUNTIME_DIR=$work/runtime
mkdir -m 700 "$XDG_RUNTIME_DIR"
# One display for the browser and for xwd, which reads its root window.
display=:$((90 + RANDOM % 100))
Xvfb "$display" -screen 0 1280x720x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
xvfb=$!
trap 'kill "$xvfb" 2>/dev/null || true; rm -rf "$work"' EXIT
sleep 1
DISPLAY=$display sqlitebrowser -R -t "$view" "$work/audit.db" >"$work/browser.log" 2>&1 &
sleep 4  # the window up, the view counted and its first rows shown
# The whole screen for the window, the table the most of it.
window=$(DISPLAY=$display xdotool search --name "DB Browser for SQLite" | head -1)
DISPLAY=$display xdotool windowmove "$window" 0 0 windowsize "$window" 1280 720
sleep 1
# Close the two docks on the right (their close buttons), then fit the path
# column to its text (a double click on its header's right edge).
DISPLAY=$display xdotool mousemove 1272 295 click 1
sleep 0.5
DISPLAY=$display xdotool mousemove 1272 71 click 1
sleep 0.5
DISPLAY=$display xdotool mousemove 136 150 click --repeat 2 1
DISPLAY=$display xdotool mousemove 380 560
sleep 1
DISPLAY=$display xwd -root -silent | xwdtopnm 2>/dev/null | pnmtopng >"$output"
kill %2 2>/dev/null || true
echo "screenshot-sqlitebrowser: $view in $output ($(stat -c %s "$output") bytes)"
