# instance.sh - a private tracefs instance for a shell test, sourced:
#
#   NAME=tb-my-test-$$ NEED="events/sched saved_tgids" . "$(dirname "$0")/lib/instance.sh"
#
# Skips the whole test (TAP "1..0 # SKIP reason") without root, without tracefs
# (mounted at /sys/kernel/tracing if it is not), without a path NEED names under
# the top-level tracefs, or when the instance cannot be made.  Then $T is the
# instance (made), TOP the tracefs root, W a scratch folder (made in $WDIR,
# default /tmp, named after NAME).  On exit the test's instance_teardown (if
# it defines one: triggers to remove first) runs, then tracing stops, every
# event is disabled and the instance removed, and W goes unless KEEP is set;
# INT and TERM exit 130 and 143 through the same path.  skip REASON and
# check STATUS WHAT are the tests' TAP helpers; n and fail count.
TOP=/sys/kernel/tracing
T=$TOP/instances/$NAME
n=0; fail=0
skip() { echo "1..0 # SKIP $1"; exit 0; }
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }

[ "$(id -u)" = 0 ] || skip "not root"
[ -d "$TOP/instances" ] || mount -t tracefs nodev "$TOP" 2>/dev/null
[ -d "$TOP/instances" ] || skip "no tracefs at $TOP"
for need in $NEED; do
	[ -e "$TOP/$need" ] || skip "no $TOP/$need"
done
mkdir "$T" || skip "cannot make $T"
W=$(mktemp -d "${WDIR:-/tmp}/$NAME.XXXXXX") || { rmdir "$T"; skip "no scratch folder in ${WDIR:-/tmp}"; }
instance_cleanup() {
	if [ -d "$T" ]; then
		command -v instance_teardown > /dev/null && instance_teardown
		{ echo 0 > "$T/tracing_on"; echo 0 > "$T/events/enable"; rmdir "$T"; } 2> /dev/null
	fi
	[ -n "$KEEP" ] || rm -rf "$W"
}
trap instance_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
trap 'exit 141' PIPE # its reader gone (prove killed): still removed
