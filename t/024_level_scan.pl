# Scans hold one file of each level below level 0 at a time
# (src/lsm/level_iter.c): a statement that reads a table of many files no
# longer opens all of them at once, and forst.sst_reader_memory bounds
# what it keeps within the statement, not only between transactions.
# Before, a scan opened every file of its range (block index and read
# window each), so its memory grew with the state.
#
# With forst.target_file_size at its minimum, a few MB make dozens of
# level 1 files.  Checked: under bound 0, a scan, one key's rows in key
# order and in a range (the primary key's index, rows fetched by TID) and
# an update of them end with at most the level 0 files and one file per
# level open (under the default bound all of them stay open, which shows
# the test can tell); scans in key order, ranges across file boundaries,
# updates by TID (their rows' files closed under them) and cursors read in
# steps between point reads all equal a heap twin.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('levelscan');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
forst.memtable_size = '1MB'
forst.memtable_memory = '4MB'
forst.block_cache_size = '256kB'
forst.target_file_size = '64kB'
forst.compression = 'none'
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE c (k int PRIMARY KEY, v text) USING forst;
CREATE TABLE ch (k int PRIMARY KEY, v text);
CREATE TABLE d (k int, w int, v text, PRIMARY KEY (k, w)) USING forst;
CREATE TABLE dh (k int, w int, v text, PRIMARY KEY (k, w));
});
for my $r (0 .. 3)
{
	my $lo = $r * 10000 + 1;
	my $hi = ($r + 1) * 10000;
	$node->safe_psql('postgres', qq{
INSERT INTO c SELECT i, md5(i::text) || md5((i + 1)::text) FROM generate_series($lo, $hi) i;
INSERT INTO ch SELECT i, md5(i::text) || md5((i + 1)::text) FROM generate_series($lo, $hi) i;
INSERT INTO d SELECT $r, i, md5(i::text) || md5((i + 1)::text) FROM generate_series(1, 10000) i;
INSERT INTO dh SELECT $r, i, md5(i::text) || md5((i + 1)::text) FROM generate_series(1, 10000) i;
});
}
$node->safe_psql('postgres', 'SELECT forst.checkpoint()');

# compactions settle (the file counts stay the same for 2 s)
my $prev = '';
for (1 .. 90)
{
	my $n = $node->safe_psql('postgres',
		q{SELECT string_agg(t || level || ':' || n, ',' ORDER BY t, level) FROM (SELECT 'c' t, level, count(*) n FROM forst.table_files('c') GROUP BY level UNION ALL SELECT 'd', level, count(*) FROM forst.table_files('d') GROUP BY level) x});
	last if $n eq $prev;
	$prev = $n;
	sleep 2;
}
note "files per level: $prev";
my (%total, %l0, %levels);
for (split /,/, $prev)
{
	my ($t, $level, $n) = /^(\w)(\d+):(\d+)$/ or die "bad $_";
	$total{$t} += $n;
	$l0{$t} = $n if $level == 0;
	$levels{$t}++ if $level > 0;
	$l0{$t} //= 0;
}
for my $t ('c', 'd')
{
	cmp_ok($total{$t} - $l0{$t}, '>=', 20, "$t: " . ($total{$t} - $l0{$t}) . " files below level 0 (of $total{$t})");
}

# Readers left open at the end of a statement, in its transaction.  A scan
# holds its level 0 files and one file per level; one of a key's rows in
# key order (the primary key's index, fetching rows by TID) too.  A scan
# of every key group in key order holds one file per level and key group.
my $open = sub {
	my ($stmt) = @_;
	my $o = $node->safe_psql('postgres', qq{
SET forst.sst_reader_memory = 0;
BEGIN;
$stmt;
SELECT readers FROM forst.session_sst_readers();
ROLLBACK;
});
	return (split /\n/, $o)[-1];
};
my $n = $open->('SELECT count(*) FROM c');
cmp_ok($n, '<=', $l0{c} + $levels{c}, "bound 0, a scan: at most the level 0 files and one per level stay open ($n)");
$n = $open->('SELECT count(*), max(v) FROM (SELECT v FROM d WHERE k = 2 ORDER BY w) x');
cmp_ok($n, '<=', $l0{d} + $levels{d}, "bound 0, one key's rows in key order ($n)");
$n = $open->('SELECT count(*), max(v) FROM d WHERE k = 1 AND w BETWEEN 100 AND 9000');
cmp_ok($n, '<=', $l0{d} + $levels{d}, "bound 0, a range of one key's rows ($n)");
$n = $open->(q{UPDATE d SET v = v || 'x' WHERE k = 3});
cmp_ok($n, '<=', $l0{d} + $levels{d}, "bound 0, an update of one key's rows by TID ($n)");
$n = $node->safe_psql('postgres', q{
BEGIN;
SELECT count(*) FROM c;
SELECT readers FROM forst.session_sst_readers();
COMMIT;
});
is((split /\n/, $n)[-1], $total{c}, 'the default bound keeps every file a scan read open');

# answers under bound 0
my $sql = "SET forst.sst_reader_memory = 0;\n";
for my $t ('c', 'ch')
{
	$sql .= "SELECT '$t-all', md5(string_agg(k || v, ',' ORDER BY k)) FROM $t;\n";
	$sql .= "SELECT '$t-desc', md5(string_agg(k::text, ',')) FROM (SELECT k FROM $t ORDER BY k DESC) x;\n";
	for my $i (1 .. 10)
	{
		my $lo = ($i * 3779) % 39000 + 1;
		my $hi = $lo + $i * 97;
		$sql .= "SELECT '$t-r$i', count(*), md5(string_agg(k || v, ',' ORDER BY k)) FROM $t WHERE k BETWEEN $lo AND $hi;\n";
	}
	$sql .= "UPDATE $t SET v = v || 'u' WHERE k % 3 = 0;\n";
	my $dt = $t eq 'c' ? 'd' : 'dh';
	$sql .= "SELECT '$t-dkey', md5(string_agg(w || v, ',' ORDER BY w)) FROM $dt WHERE k = 2;\n";
	$sql .= "UPDATE $dt SET v = v || 'u' WHERE k = 1 AND w % 3 = 0;\n";
	$sql .= "SELECT '$t-dupd', md5(string_agg(k || ',' || w || v, ',' ORDER BY k, w)) FROM $dt;\n";
	$sql .= "SELECT '$t-upd', md5(string_agg(k || v, ',' ORDER BY k)) FROM $t;\n";
}
$sql .= "SELECT 'closed', closed > 0 FROM forst.session_sst_readers();\n";
my $out = $node->safe_psql('postgres', $sql);
my %res;
for my $line (grep { /^c?h?-|^\w+-/ } split /\n/, $out)
{
	my ($tag, @rest) = split /\|/, $line;
	my ($t, $what) = split /-/, $tag, 2;
	$res{$what}{$t} = join '|', @rest;
}
my @what = sort keys %res;
is(scalar(@what), 2 + 10 + 1 + 2, 'every check ran');
my @diff = grep { !defined $res{$_}{c} || !defined $res{$_}{ch} || $res{$_}{c} ne $res{$_}{ch} } @what;
is(join(',', @diff), '', 'every answer under bound 0 equals the heap twin');
like($out, qr/^closed\|t$/m, 'files were closed within statements');

# a cursor read in steps, in key order and in the scan's own order, with
# point reads of other rows in between
my %cur;
for my $t ('c', 'ch')
{
	my $s = "SET forst.sst_reader_memory = 0;\nBEGIN;\n"
	  . "DECLARE o CURSOR FOR SELECT k, v FROM $t ORDER BY k;\n"
	  . "DECLARE u CURSOR FOR SELECT k, v FROM $t;\n";
	for my $i (1 .. 8)
	{
		my $k = ($i * 4999) % 40000 + 1;
		$s .= "MOVE 4998 FROM o;\nFETCH 2 FROM o;\nSELECT v FROM $t WHERE k = $k;\n";
		$s .= "SELECT count(*) FROM (SELECT 1 FROM $t WHERE k BETWEEN $k AND $k + 50) x;\n";
		$s .= "MOVE 4999 FROM u;\n";
	}
	$s .= "COMMIT;\n";
	$cur{$t} = $node->safe_psql('postgres', $s);
}
my @lines = split /\n/, $cur{c};
is(scalar(@lines), 8 * 4, 'the cursor steps ran');
is($cur{c}, $cur{ch}, 'cursor reads between point reads equal the heap twin');

is($node->safe_psql('postgres', "SELECT md5(string_agg(k || v, ',' ORDER BY k)) FROM c"),
	$node->safe_psql('postgres', "SELECT md5(string_agg(k || v, ',' ORDER BY k)) FROM ch"),
	'the table equals its heap twin in a new session');

# the setting: sizes from 64 kB, reloadable
is($node->psql('postgres', q{ALTER SYSTEM SET forst.target_file_size = '32kB'}), 3,
	'a target file size under 64 kB is refused');
is($node->psql('postgres', q{SET forst.target_file_size = '1MB'}), 3,
	'the target file size is a server setting');

$node->stop;
done_testing();
