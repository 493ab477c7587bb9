#!/bin/sh
# t_docs.sh - the docs cannot rot: every runnable block of README.md and
# docs/*.md is run, and every relative link points to a file (and heading)
# that exists.
#
# A runnable block is a ```sh fence with an HTML comment on the line before:
#
#   <!-- run -->                   run it
#   <!-- run: root trace-cmd -->   run it where these are present, else skip:
#                                  root (root and tracefs, for the live kernel),
#                                  trace-cmd, chromium
#
# The blocks of one page run in order, each in its own `sh -e`, all in one
# scratch directory of that page that looks like the repository's top (its
# examples/, tests/, include/, docs/, scripts/) with build/ being the build
# under test ($TB_BUILD, so the ASan suite runs the ASan CLI and examples)
# and that build's tracebuf first on PATH, as a reader who followed the
# README has it.  What one block exports the next one sees.  HOME is the
# scratch directory, so an install to $HOME/... stays in it.  `make` in a
# block is the real make run at the repository's top (a reader types the
# docs' make commands there); nothing else is stood in for.
#
# A failure names the page and the line of the block's fence, with the
# block's last lines of output.
set -u

repo=$(cd "$(dirname "$0")/.." && pwd)
build=${TB_BUILD:-build}
case $build in /*) ;; *) build=$repo/$build ;; esac
if [ ! -x "$build/tracebuf" ]; then
	echo "1..0 # SKIP $build/tracebuf is not built (make all tests)"
	exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/t_docs.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
n=0
failed=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n # skip $1"; }

# ---------------------------------------------------------------- blocks

# Every runnable block as $work/blocks/K.sh, and a line "K PAGE LINE REQUIREMENTS" in the index.
mkdir -p "$work/blocks"
cd "$repo"
perl -e '
	my ($dir, @pages) = @ARGV;
	my $k = 0;
	open(my $index, ">", "$dir/index") or die;
	for my $page (@pages) {
		open(my $f, "<", $page) or die "$page: $!";
		my ($want, $req, $in, $other, $out) = (0, "", 0, 0, undef);
		while (my $line = <$f>) {
			if ($in) {
				if ($line =~ /^```\s*$/) { $in = 0; close($out); next; }
				print $out $line;
				next;
			}
			if ($other) { # a block not marked: nothing in it is a mark
				$other = 0 if $line =~ /^```\s*$/;
				next;
			}
			if ($line =~ /^<!--\s*run(?::\s*([\w\s-]*?))?\s*-->\s*$/) {
				($want, $req) = (1, $1 // "");
				next;
			}
			if ($want && $line =~ /^```sh\s*$/) {
				$k++;
				print $index "$k $page $. $req\n";
				open($out, ">", "$dir/$k.sh") or die;
				$in = 1;
			} else {
				$other = 1 if $line =~ /^```/;
				print $index "bad $page $.\n" if $want; # a mark not followed by a sh fence
			}
			$want = 0;
		}
		print $index "bad $page $.\n" if $in; # a runnable block not closed
	}
' "$work/blocks" README.md docs/*.md

# A page's scratch directory: the repository's top as a reader sees it, build/ the build under test.
scratch_for() {
	d=$work/pages/$(echo "$1" | tr '/.' '__')
	if [ ! -d "$d" ]; then
		mkdir -p "$d/bin"
		for top in examples tests include docs scripts; do
			ln -s "$repo/$top" "$d/$top"
		done
		ln -s "$build" "$d/build"
		real_make=$(command -v make)
		printf '#!/bin/sh\nexec %s -C %s --no-print-directory "$@"\n' "$real_make" "$repo" > "$d/bin/make"
		chmod +x "$d/bin/make"
		printf 'export PATH=%s:%s:"$PATH" HOME=%s\n' "$build" "$d/bin" "$d" > "$d/.state"
	fi
	echo "$d"
}

# The first requirement of a block that this machine lacks, or nothing.
missing_requirement() {
	for r in "$@"; do
		case $r in
		root)
			[ "$(id -u)" = 0 ] || { echo "root"; return; }
			[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
			[ -d /sys/kernel/tracing/events ] || { echo "tracefs at /sys/kernel/tracing"; return; } ;;
		trace-cmd | chromium)
			command -v "$r" > /dev/null || { echo "$r (apt-get install $r)"; return; } ;;
		*) echo "unknown requirement '$r'"; return ;;
		esac
	done
}

while read -r k page line reqs; do
	if [ "$k" = bad ]; then
		not_ok "$page:$line: a runnable mark without its block"
		continue
	fi
	# shellcheck disable=SC2086 # the requirements are words
	lacking=$(missing_requirement $reqs)
	case $lacking in
	"") ;;
	unknown*) not_ok "$page:$line: $lacking (root, trace-cmd or chromium)"; continue ;;
	*) skip "$page:$line: needs $lacking"; continue ;;
	esac
	d=$(scratch_for "$page")
	started=$(date +%s%N)
	# The page's state so far, the block in the same shell under -e, then what it exported.
	(cd "$d" && timeout 120 sh -e -c ". ./.state; . '$work/blocks/$k.sh'; export -p > .state.next") \
		> "$work/out" 2>&1 < /dev/null
	status=$?
	if [ $status -eq 0 ]; then
		mv "$d/.state.next" "$d/.state"
		ok "$page:$line: block runs ($((($(date +%s%N) - started) / 1000000)) ms)"
	else
		not_ok "$page:$line: block failed (exit $status)"
		# its first lines (where an error usually is) and its last
		if [ "$(wc -l < "$work/out")" -le 20 ]; then
			sed 's/^/#   /' "$work/out"
		else
			sed -n '1,6s/^/#   /p' "$work/out"
			echo "#   ..."
			tail -n 12 "$work/out" | sed 's/^/#   /'
		fi
	fi
done < "$work/blocks/index"

# ----------------------------------------------------------------- links

# Every relative link of the pages (outside code) to a file that exists, and to a heading of it
# when it names one (GitHub's anchors: lower case, punctuation dropped, spaces to hyphens).
cd "$repo"
perl -e '
	use strict;
	my %anchors;
	sub anchors_of {
		my ($file) = @_;
		return $anchors{$file} if $anchors{$file};
		my (%seen, %set, $fence);
		open(my $f, "<", $file) or return {};
		while (<$f>) {
			$fence = !$fence if /^```/;
			next if $fence || !/^#+\s+(.*?)\s*$/;
			(my $a = lc $1) =~ s/[^\w\- ]//g;
			$a =~ s/ /-/g;
			my $n = $seen{$a}++;
			$set{$n ? "$a-$n" : $a} = 1;
		}
		return $anchors{$file} = \%set;
	}
	my ($links, $bad) = (0, 0);
	for my $page (@ARGV) {
		(my $dir = $page) =~ s{[^/]*$}{};
		open(my $f, "<", $page) or die;
		my $fence;
		while (my $line = <$f>) {
			$fence = !$fence if $line =~ /^```/;
			next if $fence;
			(my $text = $line) =~ s/`[^`]*`//g;
			while ($text =~ /\]\(([^)\s]+)\)|<img [^>]*src="([^"]+)"/g) {
				my $target = $1 // $2;
				next if $target =~ m{^[a-z]+:};
				$links++;
				my ($path, $anchor) = split /#/, $target, 2;
				my $file = $path eq "" ? $page : "$dir$path";
				if (!-e $file) {
					print "# $page:$.: $target: no file $file\n";
					$bad++;
				} elsif (defined $anchor && $file =~ /\.md$/ && !anchors_of($file)->{$anchor}) {
					print "# $page:$.: $target: no heading #$anchor in $file\n";
					$bad++;
				}
			}
		}
	}
	print "links $links $bad\n";
' README.md docs/*.md > "$work/links"
grep '^#' "$work/links"
set -- $(sed -n 's/^links //p' "$work/links")
if [ "${1:-0}" -gt 0 ] && [ "${2:-1}" -eq 0 ]; then
	ok "all $1 relative links of README.md and docs/*.md point to a file and heading that exist"
else
	not_ok "relative links: ${2:-?} of ${1:-?} point to nothing"
fi
lines=$(wc -l < README.md)
if [ "$lines" -le 200 ]; then
	ok "README.md is $lines lines, at most 200"
else
	not_ok "README.md is $lines lines, more than 200"
fi

echo "1..$n"
[ $failed -eq 0 ]
