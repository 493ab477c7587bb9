#!/usr/bin/perl
# public-names.pl HEADER... - the rules of docs/design.md §0 "Where a public
# name lives", checked on public headers (tests/t_public_names.sh runs it on
# include/tracebuf/*.h).  Prints one line per broken rule and exits 1, or
# prints what it checked and exits 0.
#
#   prefix   a public name's prefix is its first word after tb_ / TB_
#            (tb_ring_new, struct tb_ring_opts, TB_RING_X: "ring"); every
#            name of one prefix lives in one header, and a prefix that has
#            a header of its name (ring.h) lives there.  Names starting
#            tb__ / TB__ are the headers' internals and have no prefix.
#   tep      no public header names a libtraceevent, libtracefs or kbuffer
#            type or function (outside comments).
#   verbs    one lifecycle pair: a handle is made by _open and ended by
#            _close (backed by a file, fd or shm), or made by _new (or a
#            verb naming its input) and ended by _free (memory); no
#            _create, _destroy, _release, _fini, _detach, _alloc, _delete,
#            _dispose; every _open has its _close and every _new its _free.
#   owner    every header has an "Ownership:" paragraph.
use strict;
use warnings;

my (%where, %names_in, @bad, $nnames);
my %file_of_prefix_header;

sub strip {	# comments out (strings kept), continuation lines joined
	my ($t) = @_;
	$t =~ s{("(?:\\.|[^"\\])*")|/\*.*?\*/|//[^\n]*}{defined $1 ? $1 : " "}gse;
	$t =~ s/\\\n/ /g;
	$t =~ s/^#\s*ifdef\s+__cplusplus\b.*?^#\s*endif[^\n]*$//gms;
	return $t;
}

sub declared {	# the names a header declares, as [name, kind]
	my ($t) = @_;
	my @out;
	for my $line (split /\n/, $t) {
		push @out, [$1, "macro"] if $line =~ /^\s*#\s*define\s+(\w+)/;
	}
	$t =~ s/^\s*#[^\n]*$//gm;
	# walk the text at brace depth 0, statement by statement
	my ($depth, $stmt, $body) = (0, "", "");
	for my $c (split //, $t) {
		if ($depth > 0) {
			$body .= $c;
			$depth++ if $c eq "{";
			if ($c eq "}" && --$depth == 0) {
				if ($stmt =~ /\benum\b/) {	# enumerators
					push @out, [$1, "enumerator"] while $body =~ /(?:^|[{,])\s*(\w+)\s*(?==|,|\})/g;
				}
				$stmt = ""; $body = "";
			}
			next;
		}
		if ($c eq "{") {
			push @out, [$2, "type"] if $stmt =~ /\b(struct|enum|union)\s+(\w+)\s*$/;
			# a function defined here (static inline): NAME(PARAMS) {
			if ($stmt !~ /\b(?:struct|enum|union)\s+\w+\s*$/ &&
			    $stmt =~ /\b(\w+)\s*\((?:[^()]|\([^()]*\))*\)\s*$/s) {
				push @out, [$1, "function"];
			}
			$depth = 1; $body = "{";
			next;
		}
		if ($c eq ";") {
			if ($stmt =~ /^\s*typedef\b/) {
				push @out, [$1, "typedef"] if $stmt =~ /(?<!struct )(?<!enum )(?<!union )\b(tb_\w+)\s*(?:\(|\)|\[|$)/;
			} elsif ($stmt =~ /(?<!struct )(?<!enum )(?<!union )\b(\w+)\s*\(/) {
				push @out, [$1, "function"];
			} elsif ($stmt =~ /\bextern\b/ && $stmt =~ /(?<!struct )(?<!enum )(?<!union )\b(\w+)\s*(?:\[[^\]]*\])?\s*$/) {
				push @out, [$1, "variable"];
			}
			$stmt = "";
			next;
		}
		$stmt .= $c;
	}
	return grep { $_->[0] =~ /^tb_/i && $_->[0] !~ /^tb__/i } @out;
}

die "usage: public-names.pl HEADER...\n" unless @ARGV;
my %has_header = map { my $b = $_; $b =~ s{.*/}{}; $b =~ s/\.h$//; ($b => 1) } @ARGV;
for my $h (@ARGV) {
	open my $fh, "<", $h or die "public-names: $h: $!\n";
	local $/; my $raw = <$fh>; close $fh;
	(my $base = $h) =~ s{.*/}{};
	push @bad, "owner: $h has no \"Ownership:\" paragraph" unless $raw =~ /\bOwnership:/;
	my $code = strip($raw);
	my %seen;
	for my $w ($code =~ /\b(tep_\w+|tracefs_\w+|kbuffer\w*|trace_seq\w*)/g) {
		push @bad, "tep: $h names $w, a libtraceevent/libtracefs name" unless $seen{$w}++;
	}
	push @bad, "tep: $h includes a libtraceevent header" if $code =~ /#\s*include\s*[<"](?:traceevent|tracefs|kbuffer)/;
	for my $d (declared($code)) {
		my ($name, $kind) = @$d;
		print "$base $kind $name\n" if $ENV{PUBLIC_NAMES_LIST};
		$nnames++;
		my ($prefix) = lc($name) =~ /^tb_([a-z0-9]+)/;
		$where{$prefix}{$base} .= " $name";
		$names_in{$base}{$name} = $kind;
	}
}
for my $p (sort keys %where) {
	my @hs = sort keys %{$where{$p}};
	if (@hs > 1) {
		push @bad, "prefix: tb_${p}_ lives in " . scalar(@hs) . " headers:" .
			join("", map { " $_ (" . substr($where{$p}{$_}, 1) . ")" } @hs);
	} elsif ($has_header{$p} && $hs[0] ne "$p.h") {
		push @bad, "prefix: tb_${p}_ has $p.h but lives in $hs[0] ($where{$p}{$hs[0]} )";
	}
}
my %all = map { %{$names_in{$_}} } keys %names_in;
for my $n (sort keys %all) {
	next unless $all{$n} eq "function";
	push @bad, "verbs: $n: $1 is not a lifecycle verb of ours (open/close, new/free)"
		if $n =~ /_(create|destroy|release|fini|detach|alloc|delete|dispose)$/;
	(my $stem = $n) =~ s/_(open|new)$// or next;
	my $end = $n =~ /_open$/ ? "${stem}_close" : "${stem}_free";
	push @bad, "verbs: $n has no $end" unless exists $all{$end};
}
if (@bad) {
	print "$_\n" for @bad;
	exit 1;
}
printf "public-names: %d names, %d prefixes in %d headers: every prefix in one header, " .
	"no libtraceevent name, open/close and new/free, ownership stated\n",
	$nnames, scalar(keys %where), scalar(@ARGV);
