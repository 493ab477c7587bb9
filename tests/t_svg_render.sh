#!/bin/sh
# The SVGs as a person sees them: `tracebuf offcpu --svg` and `tracebuf
# stats --svg` drawn by headless Chromium, and each screenshot checked to be
# a picture (tests/lib/png_check.py: enough of it inked, in enough colours),
# not a blank page or an error.  Skipped without chromium or python3.
B=${TB_BUILD:-build}
T=$B/tracebuf
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
if [ -z "$CHROME" ] || ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP needs chromium and python3 (apt-get install chromium)"
	exit 0
fi
W=$(mktemp -d /tmp/tb-t-render-XXXXXX) || exit 1
trap 'rm -rf "$W"' EXIT
trap 'exit 1' INT TERM HUP
n=0; fail=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
shot() { # SVG HEIGHT -> SVG.png, checked
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$W/profile" \
		--window-size=1200,"$2" --screenshot="$1.png" "file://$(realpath "$1")" > "$W/chrome.log" 2>&1
	ok $? "chromium draws $(basename "$1")"
	verdict=$(python3 tests/lib/png_check.py "$1.png" 2>&1); ok $? "$(basename "$1").png is a picture: $verdict"
}

"$T" offcpu -q --svg "$W/offcpu.svg" tests/data/kernel/cap-a-small-noloss > "$W/folded" 2>/dev/null
ok $? "offcpu --svg of a kernel capture"
shot "$W/offcpu.svg" 400
"$T" stats --svg "$W/ring-kernel.svg" tests/data/kernel/cap-b-overrun; ok $? "stats --svg of a kernel capture"
shot "$W/ring-kernel.svg" 420
"$B/examples/demo" "$W/demo" > /dev/null 2>&1
"$T" stats --svg "$W/ring-demo.svg" "$W/demo"; ok $? "stats --svg of a saved tracebuf ring"
shot "$W/ring-demo.svg" 420
echo "1..$n"
exit $fail
