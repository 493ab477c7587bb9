#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/soak.sh MINUTES [options] - a soak of one shared-memory session (not
# in `make test`; docs/soak.md has what it checks and the figures of its runs).
#
# `tracebuf record --shm` makes the session; a writer process (tests/soak/soak.c,
# `soak write`: 4 threads firing soak:tick as fast as the machine lets them)
# joins it through its environment, and the consumer (`soak read`: the
# drain `record` does, checking every record) empties it.  Every
# --consumer-every seconds the consumer is SIGKILLed and a new one continues
# its ledger; every --writer-every seconds the writer is SIGKILLed, `tracebuf
# recover` counts the writes in flight, and a new incarnation starts.  VmRSS
# of every process is sampled every --sample-every seconds.  At the end the
# writer is stopped, the consumer drains what is left, and the books must
# balance exactly (below); any violation exits 1.
#
# Options:
#   --consumer-every S   kill and restart the consumer every S seconds (30)
#   --writer-every S     kill and restart the writer every S seconds (45)
#   --sample-every S     sample VmRSS every S seconds (5)
#   --settle S           RSS samples of a process younger than S seconds are
#                        not compared (5): it is still touching its ring
#   --rss-tolerance PCT  RSS flat: the last quarter's median VmRSS of each
#                        role at most PCT % above the first quarter's (10)
#   --kb KB              the ring's size per CPU (1408, record's default)
#   --dir DIR            where the ledgers and series go (default: a new
#                        directory under /tmp, kept)
#   --no-build           use the build as it is
# TB_BUILD=DIR takes the programs from DIR (default build), as the tests do.
set -u

usage() {
	sed -n '4,30p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

[ $# -ge 1 ] || usage
MINUTES=$1
shift
case $MINUTES in '' | *[!0-9.]*) usage ;; esac
CONSUMER_EVERY=30 WRITER_EVERY=45 SAMPLE_EVERY=5 SETTLE=5 RSS_TOL=10 KB=1408 DIR= BUILD=1
while [ $# -gt 0 ]; do
	case $1 in
	--consumer-every) CONSUMER_EVERY=$2; shift ;;
	--writer-every) WRITER_EVERY=$2; shift ;;
	--sample-every) SAMPLE_EVERY=$2; shift ;;
	--settle) SETTLE=$2; shift ;;
	--rss-tolerance) RSS_TOL=$2; shift ;;
	--kb) KB=$2; shift ;;
	--dir) DIR=$2; shift ;;
	--no-build) BUILD=0 ;;
	*) usage ;;
	esac
	shift
done

cd "$(dirname "$0")/.." || exit 2
B=${TB_BUILD:-build} # as the tests take it
TB=$B/tracebuf
SOAK=$B/tests/soak/soak
if [ $BUILD = 1 ]; then
	make -j2 --no-print-directory B="$B" "$TB" "$SOAK" >/dev/null || { echo "soak: the build failed" >&2; exit 2; }
fi
[ -n "$DIR" ] || DIR=$(mktemp -d /tmp/tracebuf-soak.XXXXXX)
mkdir -p "$DIR" || exit 2
SHM=/dev/shm/tracebuf-soak.$$
LEDGER=$DIR/reader.ledger
CRASHES=$DIR/crashes.tsv
RSS=$DIR/rss.tsv
LOG=$DIR/soak.log
FAILS=0

say() { echo "soak: $*" | tee -a "$LOG" >&2; }
fail() { say "VIOLATION: $*"; FAILS=$((FAILS + 1)); }
now() { date +%s.%N; }
# seconds since the soak started, to the millisecond
elapsed() { echo "$(now) $T0" | awk '{printf "%.3f", $1 - $2}'; }

WPID= RPID=
cleanup() {
	for p in $WPID $RPID; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$SHM" "$SHM.formats"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 2' INT TERM

# key=value lines of a soak subcommand as shell variables PREFIX_key
load() {
	local prefix=$1 out
	shift
	out=$("$@") || { say "$* failed"; return 1; }
	eval "$(echo "$out" | sed -n "s/^\([a-z0-9_]*\)=\([0-9]*\)\$/${prefix}_\1=\2/p")"
}

# ------------------------------------------------------------ the session

"$TB" record --shm "$SHM" -b "$KB" -e 'soak:*' -o "$DIR/create.dat" -- true 2>>"$LOG" ||
	{ say "tracebuf record could not make the session"; exit 2; }
export TRACEBUF_SHM=$SHM TRACEBUF_SHM_FORMATS=$SHM.formats TRACEBUF_EVENTS='soak:*'

INC=0 READERS=0
start_writer() {
	INC=$((INC + 1))
	"$SOAK" write "$DIR/writer.$INC.state" $INC 2>>"$LOG" &
	WPID=$! WSTART=$(now)
}
start_reader() {
	READERS=$((READERS + 1))
	"$SOAK" read "$SHM" "$LEDGER" 2>>"$LOG" &
	RPID=$! RSTART=$(now)
}
alive() { kill -0 "$1" 2>/dev/null; }

# ------------------------------------------------------------ a writer's end

# The ring's committed + refused at the last writer's end, and the in-flight count then.
PREV_FINISHED=0 PREV_INFLIGHT=0 SUM_DONE=0 SUM_BEGUN=0 SUM_LATE=0 SUM_NOT_BEGUN=0 CRASHES_N=0
printf 'crash\tat_s\tincarnation\tbegun\tdone\tpending\tcommitted_or_refused_after_done\tin_flight\tnot_yet_counted\n' >"$CRASHES"

# After the writer process ended (how: $1), with no writer alive: the
# writer's own counts against the ring's and `tracebuf recover`'s.
#
# For each thread the writer's state says done <= begun <= done + 1; a
# pending event (begun, not done) was, at the kill, either not yet counted
# by tb_write, in flight, or finished by tracebuf (committed or refused)
# after tb_write's end but before `done` was stored.  The ring's
# committed + refused grew by done plus the finished ones (exact); the
# in-flight count grew by the ones in flight (exact, if recover is); what
# is left of pending is the first kind, which nobody can see: it must not
# be negative.
account_writer_end() {
	local how=$1 at
	at=$(elapsed)
	load W "$SOAK" wstate "$DIR/writer.$INC.state" || { fail "incarnation $INC left no sound state"; return; }
	[ "$W_sound" = 1 ] || fail "incarnation $INC: a thread's begun and done are more than one apart"
	load C "$SOAK" counters "$SHM" || return
	"$TB" recover "$SHM" -o "$DIR/recover.dat" 2>"$DIR/recover.txt"
	local line inflight
	line=$(grep 'in flight' "$DIR/recover.txt")
	inflight=$(echo "$line" | sed -n 's/.*: \([0-9]*\) writes\{0,1\} in flight.*/\1/p')
	rm -f "$DIR/recover.dat"
	if [ -z "$inflight" ]; then
		fail "incarnation $INC: recover gave no exact in-flight count: ${line:-$(cat "$DIR/recover.txt")}"
		inflight=$PREV_INFLIGHT
	fi
	local finished=$((C_written + C_refused)) late inflight_new not_begun
	late=$((finished - PREV_FINISHED - W_done))
	inflight_new=$((inflight - PREV_INFLIGHT))
	not_begun=$((W_pending - late - inflight_new))
	[ $late -ge 0 ] || fail "incarnation $INC: the ring counts $((-late)) fewer events than the writer finished"
	[ $inflight_new -ge 0 ] || fail "incarnation $INC: the in-flight count went down by $((-inflight_new))"
	[ $not_begun -ge 0 ] || fail "incarnation $INC: $((-not_begun)) more events in flight or finished than pending"
	if [ "$how" = stopped ] && [ $((W_pending + late + inflight_new)) -ne 0 ]; then
		fail "incarnation $INC stopped cleanly, yet pending $W_pending, finished late $late, in flight $inflight_new"
	fi
	if [ "$how" = killed ]; then
		CRASHES_N=$((CRASHES_N + 1))
		printf '%d\t%s\t%d\t%s\t%s\t%s\t%d\t%d\t%d\n' $CRASHES_N "$at" $INC "$W_begun" "$W_done" "$W_pending" \
			$late $inflight_new $not_begun >>"$CRASHES"
	fi
	SUM_BEGUN=$((SUM_BEGUN + W_begun)) SUM_DONE=$((SUM_DONE + W_done)) SUM_LATE=$((SUM_LATE + late))
	SUM_NOT_BEGUN=$((SUM_NOT_BEGUN + not_begun))
	PREV_FINISHED=$finished PREV_INFLIGHT=$inflight
}

kill_writer() {
	alive $WPID || fail "writer incarnation $INC (pid $WPID) ended before it was killed"
	kill -KILL $WPID 2>/dev/null
	wait $WPID 2>/dev/null
	account_writer_end killed
}

kill_reader() {
	alive $RPID || fail "consumer $READERS (pid $RPID) ended before it was killed (see $LOG)"
	kill -KILL $RPID 2>/dev/null
	wait $RPID 2>/dev/null
}

# ------------------------------------------------------------ RSS

printf 'at_s\trole\tpid\tage_s\tvmrss_kb\trssanon_kb\n' >"$RSS"
sample_rss() {
	local role pid start at
	at=$(elapsed)
	for role in writer consumer; do
		if [ $role = writer ]; then pid=$WPID start=$WSTART; else pid=$RPID start=$RSTART; fi
		awk -v at="$at" -v role=$role -v pid="$pid" -v age="$(echo "$(now) $start" | awk '{print $1 - $2}')" \
			'/^VmRSS:/ {rss = $2} /^RssAnon:/ {anon = $2}
			 END {if (rss != "") printf "%s\t%s\t%s\t%.1f\t%s\t%s\n", at, role, pid, age, rss, anon}' \
			"/proc/$pid/status" 2>/dev/null >>"$RSS"
	done
}

# ------------------------------------------------------------ the run

T0=$(now)
DURATION=$(awk -v m="$MINUTES" 'BEGIN {printf "%d", m * 60}')
say "session $SHM, $KB KiB per CPU, $(nproc) CPUs; $MINUTES min; consumer killed every ${CONSUMER_EVERY}s," \
	"writer every ${WRITER_EVERY}s; RSS every ${SAMPLE_EVERY}s; files in $DIR"
start_reader
start_writer
next_reader=$CONSUMER_EVERY next_writer=$WRITER_EVERY next_sample=0
while :; do
	t=$(elapsed)
	t=${t%.*}
	[ "$t" -ge "$DURATION" ] && break
	if [ "$t" -ge $next_sample ]; then
		sample_rss
		next_sample=$((next_sample + SAMPLE_EVERY))
	fi
	if [ "$t" -ge $next_writer ]; then
		kill_writer
		start_writer
		next_writer=$((next_writer + WRITER_EVERY))
	fi
	if [ "$t" -ge $next_reader ]; then
		kill_reader
		start_reader
		next_reader=$((next_reader + CONSUMER_EVERY))
	fi
	sleep 0.2
done

# The end: the writer stopped (no event pending), then the consumer drains the rest.
alive $WPID || fail "the last writer incarnation $INC ended before it was stopped"
kill -TERM $WPID
wait $WPID
account_writer_end stopped
alive $RPID || fail "the last consumer ended before it was stopped"
kill -TERM $RPID
wait $RPID
RC=$?
[ $RC = 0 ] || fail "the last consumer exited with status $RC (a check failed: see $LOG)"
load L "$SOAK" ledger "$LEDGER" || exit 1
load C "$SOAK" counters "$SHM" || exit 1

# ------------------------------------------------------------ the books

[ "$L_torn" = 0 ] || fail "$L_torn torn records"
[ "$L_disorder" = 0 ] || fail "$L_disorder records whose thread's sequence did not increase"
[ "$L_numbering" = 0 ] || fail "$L_numbering pages whose numbers skip or repeat without a count"
[ "$L_miscount" = 0 ] || fail "$L_miscount pages whose records are not the count the read said"
[ "$C_entries" = 0 ] || fail "$C_entries events left unread after the final drain"
# What the ring committed went to a consumer, or was counted lost on its way.
READ_SIDE=$((L_read + L_page_lost + L_crash_lost + C_entries))
[ $READ_SIDE = "$C_written" ] ||
	fail "the ring committed $C_written; read $L_read + lost in pages $L_page_lost + taken by killed consumers $L_crash_lost + left $C_entries = $READ_SIDE"
# What the writers finished is what the ring committed or refused.
[ $((SUM_DONE + SUM_LATE)) = $((C_written + C_refused)) ] ||
	fail "the writers finished $SUM_DONE (+ $SUM_LATE at kills), the ring committed $C_written and refused $C_refused"
LOSSES=$((L_page_lost + L_crash_lost + C_refused + PREV_INFLIGHT))
BOOKS=$((L_read + LOSSES + SUM_NOT_BEGUN))
[ $BOOKS = $SUM_BEGUN ] || fail "written $SUM_BEGUN != read $L_read + counted losses $LOSSES + never counted $SUM_NOT_BEGUN"

# RSS flat: per role, the settled samples' median in the last quarter against the first quarter's.
RSS_SUMMARY=$(awk -F'\t' -v settle="$SETTLE" -v dur="$DURATION" -v tol="$RSS_TOL" '
	function median(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
	}
	NR > 1 && $4 >= settle {
		r = $2; all[r, ++n[r]] = $5
		if (min[r] == "" || $5 < min[r]) min[r] = $5
		if ($5 > max[r]) max[r] = $5
		if ($1 < dur / 4) first[r, ++nf[r]] = $5
		if ($1 >= dur * 3 / 4) last[r, ++nl[r]] = $5
	}
	END {
		bad = 0
		for (r in n) {
			for (i = 1; i <= nf[r]; i++) f[i] = first[r, i]
			for (i = 1; i <= nl[r]; i++) l[i] = last[r, i]
			mf = nf[r] ? median(f, nf[r]) : 0; ml = nl[r] ? median(l, nl[r]) : 0
			ok = nf[r] && nl[r] && ml <= mf * (1 + tol / 100)
			if (!ok) bad = 1
			printf "%s: %d samples, VmRSS %d..%d KiB; median first quarter %.0f KiB (%d), last quarter %.0f KiB (%d): %s\n", \
				r, n[r], min[r], max[r], mf, nf[r], ml, nl[r], ok ? "flat" : "NOT FLAT"
		}
		exit bad
	}' "$RSS")
RSS_OK=$?
[ $RSS_OK = 0 ] || fail "RSS not flat (or too few settled samples): $RSS_SUMMARY"

ELAPSED=$(elapsed)
{
	echo "soak: $MINUTES min ($ELAPSED s), commit $(git rev-parse --short HEAD 2>/dev/null), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "soak: writer incarnations $INC ($CRASHES_N killed), consumers $L_starts ($((L_starts - 1)) killed)"
	echo "soak: written (begun) $SUM_BEGUN = read $L_read + counted losses $LOSSES + never counted by tracebuf $SUM_NOT_BEGUN"
	echo "soak:   losses: overwritten (LOST in pages) $L_page_lost, refused $C_refused, taken by killed consumers $L_crash_lost" \
		"(at most $L_crash_lost_max at one restart), in flight at writer kills $PREV_INFLIGHT"
	echo "soak:   ring: committed $C_written, refused $C_refused, overrun $C_overrun; writers finished $SUM_DONE + $SUM_LATE after their last count"
	echo "soak:   rate: $(awk -v n="$SUM_BEGUN" -v r="$L_read" -v s="$ELAPSED" 'BEGIN {printf "%.2f M events/s written, %.2f M/s read", n / s / 1e6, r / s / 1e6}')"
	echo "soak: crashes (in flight / finished after the count / not yet counted, per kill):" \
		"$(awk -F'\t' 'NR > 1 {printf "%s%d/%d/%d", (NR > 2 ? " " : ""), $8, $7, $9}' "$CRASHES")"
	echo "$RSS_SUMMARY" | sed 's/^/soak: RSS /'
	echo "soak: torn $L_torn, out of order $L_disorder, numbering $L_numbering, miscounted pages $L_miscount"
	if [ $FAILS = 0 ]; then echo "soak: PASS"; else echo "soak: FAIL ($FAILS violations)"; fi
} | tee -a "$LOG"
[ $FAILS = 0 ]
