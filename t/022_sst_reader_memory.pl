# forst.sst_reader_memory bounds what a backend keeps of the SST files it
# has read (block indexes, bloom filters, read windows) between
# transactions: the first use of the readers in a transaction closes the
# least recently used ones.  Before it, a backend kept a reader for every
# file it had ever read, files compacted away included, for its lifetime.
# Checked in one long session: readers accumulate under the default, are
# closed down to the bound, least recently used first, and every answer stays equal to a heap twin's -- reads by
# key, scans, updates and deletes that fetch rows by TID -- while files are
# closed under them between transactions and compactions replace them.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('readers');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
forst.memtable_size = '1MB'
forst.memtable_memory = '4MB'
forst.block_cache_size = '256kB'
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE a (k int PRIMARY KEY, v text) USING forst;
CREATE TABLE b (k int PRIMARY KEY, v text) USING forst;
CREATE TABLE ah (k int PRIMARY KEY, v text);
CREATE TABLE bh (k int PRIMARY KEY, v text);
});
for my $t ('a', 'b')
{
	for my $r (0 .. 2)
	{
		my $lo = $r * 10000 + 1;
		my $hi = ($r + 1) * 10000;
		$node->safe_psql('postgres', qq{
INSERT INTO $t SELECT i, md5(i::text) || md5((i + 1)::text) FROM generate_series($lo, $hi) i;
INSERT INTO ${t}h SELECT i, md5(i::text) || md5((i + 1)::text) FROM generate_series($lo, $hi) i;
});
	}
}
$node->safe_psql('postgres', 'SELECT forst.checkpoint()');

# compactions settle (the file counts stay the same for 2 s)
my $prev = '';
for (1 .. 60)
{
	my $n = $node->safe_psql('postgres',
		q{SELECT (SELECT count(*) FROM forst.table_files('a')) || '/' || (SELECT count(*) FROM forst.table_files('b'))});
	last if $n eq $prev;
	$prev = $n;
	sleep 2;
}
my ($fa, $fb) = split m{/}, $prev;
cmp_ok($fa, '>=', 1, "a has $fa SST files");
cmp_ok($fb, '>=', 1, "b has $fb SST files");

# One session, one transaction per statement.  count(*) scans every file of
# its table.  lru_kb: a bound whose three quarters hold a's readers but not
# b's as well.
my $out = $node->safe_psql('postgres', q{
SET forst.sst_reader_memory = 0;
SELECT count(*) FROM a;
SELECT 'zero after a', readers, closed FROM forst.session_sst_readers();
SELECT (bytes * 4 / 3 + 1024) / 1024 + 1 AS lru_kb FROM forst.session_sst_readers() \gset
SELECT count(*) FROM b;
SELECT 'zero after b', readers, closed FROM forst.session_sst_readers();
RESET forst.sst_reader_memory;
SELECT count(*) FROM a;
SELECT 'default', readers, bytes > 0, closed FROM forst.session_sst_readers();
SET forst.sst_reader_memory = :lru_kb;
SELECT count(*) FROM a;
SELECT 'lru', readers, closed FROM forst.session_sst_readers();
});
my %row = map { my @f = split /\|/; ($f[0] => [@f[1 .. $#f]]) } grep { /\|/ } split /\n/, $out;
is($row{'zero after a'}[0], $fa, 'bound 0: the files of the last transaction are open');
is($row{'zero after a'}[1], 0, 'nothing to close before');
is($row{'zero after b'}[0], $fb, 'bound 0: the next transaction closed them and opened its own');
is($row{'zero after b'}[1], $fa, 'closed counts the readers closed');
is($row{default}[0], $fa + $fb, 'default bound: the readers of both tables stay open');
is($row{default}[1], 't', 'their memory is counted');
is($row{default}[2], $fa, 'nothing closed under the default bound');
is($row{lru}[0], $fa, 'a smaller bound keeps the most recently used readers');
is($row{lru}[1], $fa + $fb, 'and closes the least recently used');

# Answers under bound 0, while files are closed between every two
# transactions and new flushes and compactions replace them: point reads,
# ranges, updates and deletes (which fetch the old row by TID), and a
# transaction of several statements.
my $sql = "SET forst.sst_reader_memory = 0;\n";
for my $i (1 .. 40)
{
	my $k = ($i * 7919) % 30000 + 1;
	my $lo = ($i * 104729) % 29000 + 1;
	my $hi = $lo + 500;
	for my $t ('a', 'ah')
	{
		$sql .= "UPDATE $t SET v = v || '$i' WHERE k = $k;\n";
		$sql .= "DELETE FROM $t WHERE k = $k + 1;\n";
		$sql .= "INSERT INTO $t SELECT i, md5(i::text) FROM generate_series(30000 + $i * 200, 30000 + $i * 200 + 199) i;\n";
	}
	$sql .= "BEGIN;\n";
	$sql .= "UPDATE b SET v = 'x$i' WHERE k BETWEEN $lo AND $hi;\n";
	$sql .= "UPDATE bh SET v = 'x$i' WHERE k BETWEEN $lo AND $hi;\n";
	$sql .= "SELECT 'r$i', (SELECT md5(string_agg(k || v, ',' ORDER BY k)) FROM b WHERE k BETWEEN $lo AND $hi) = "
	  . "(SELECT md5(string_agg(k || v, ',' ORDER BY k)) FROM bh WHERE k BETWEEN $lo AND $hi);\n";
	$sql .= "COMMIT;\n";
	$sql .= "SELECT 'p$i', (SELECT v FROM a WHERE k = $k) IS NOT DISTINCT FROM (SELECT v FROM ah WHERE k = $k);\n";
}
$sql .= "SELECT 'closed', closed > 0 FROM forst.session_sst_readers();\n";
$out = $node->safe_psql('postgres', $sql);
my @checks = grep { /^[rp]\d+\|/ } split /\n/, $out;
is(scalar(@checks), 80, 'all checks ran');
is(join(',', grep { !/\|t$/ } @checks), '', 'every range and point read equals the heap twin');
like($out, qr/^closed\|t$/m, 'readers were closed during the workload');

for my $t ('a', 'b')
{
	is($node->safe_psql('postgres', "SELECT md5(string_agg(k || v, ',' ORDER BY k)) FROM $t"),
		$node->safe_psql('postgres', "SELECT md5(string_agg(k || v, ',' ORDER BY k)) FROM ${t}h"),
		"table $t equals its heap twin");
}

# Files that compactions took out of a table: a session that has read
# them closes their readers at its next read of the table, instead of
# keeping them (and their filters and indexes) until the bound fills up
# with old and new files alike.
my ($in, $sout, $serr) = ('', '', '');
my $sess = IPC::Run::start(
	[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres') ],
	'<', \$in, '>', \$sout, '2>', \$serr);
$in .= "SELECT 'c1', count(*) FROM a; SELECT 'o1', readers FROM forst.session_sst_readers();\n";
$sess->pump until $sout =~ /^o1\|/m;
my $before = $node->safe_psql('postgres', q{SELECT string_agg(file_id::text, ',' ORDER BY file_id) FROM forst.table_files('a')});
my @before = split /,/, $before;
like($sout, qr/^o1\|@{[ scalar(@before) ]}$/m, 'the session has a reader for each of the ' . scalar(@before) . ' files it read');
# new level-0 files until a compaction replaces every file read above
my $gone = 0;
for my $round (1 .. 40)
{
	$node->safe_psql('postgres', qq{
INSERT INTO a SELECT i, md5(i::text) FROM generate_series(200000 + $round * 3000, 200000 + $round * 3000 + 2999) i;
INSERT INTO ah SELECT i, md5(i::text) FROM generate_series(200000 + $round * 3000, 200000 + $round * 3000 + 2999) i;
SELECT forst.checkpoint();});
	my $left = $node->safe_psql('postgres',
		"SELECT count(*) FROM forst.table_files('a') WHERE file_id IN ($before)");
	if ($left == 0) { $gone = 1; last; }
	sleep 1;
}
ok($gone, 'compactions replaced every file the session had read');
$in .= "SELECT 'c2', (SELECT count(*) FROM a) = (SELECT count(*) FROM ah); SELECT 'o2', readers FROM forst.session_sst_readers();\n";
$sess->pump until $sout =~ /^o2\|/m;
my $now = $node->safe_psql('postgres', q{SELECT count(*) FROM forst.table_files('a')});
like($sout, qr/^c2\|t$/m, 'the session reads the same rows as the heap twin');
my ($open) = $sout =~ /^o2\|(\d+)$/m;
cmp_ok($open, '<=', $now,
	"the session's open readers ($open) are at most the table's current files ($now): the replaced ones were closed");
# A table truncated under the session (a new relfilenode; the old one is
# dropped at commit): its old files' readers go at the session's next read.
$node->safe_psql('postgres', q{
CREATE TABLE c (k int PRIMARY KEY, v text) USING forst;
INSERT INTO c SELECT i, md5(i::text) FROM generate_series(1, 5000) i;
SELECT forst.checkpoint();});
my $cfiles = $node->safe_psql('postgres', q{SELECT count(*) FROM forst.table_files('c')});
$in .= "SELECT 'c3', count(*) FROM c; SELECT 'o3', readers FROM forst.session_sst_readers();\n";
$sess->pump until $sout =~ /^o3\|/m;
my ($o3) = $sout =~ /^o3\|(\d+)$/m;
$node->safe_psql('postgres', q{
TRUNCATE c;
INSERT INTO c SELECT i, md5(i::text) FROM generate_series(1, 100) i;
SELECT forst.checkpoint();});
my $cnow = $node->safe_psql('postgres', q{SELECT count(*) FROM forst.table_files('c')});
$in .= "SELECT 'c4', count(*) FROM c; SELECT 'o4', readers FROM forst.session_sst_readers();\n";
$sess->pump until $sout =~ /^o4\|/m;
like($sout, qr/^c4\|100$/m, 'the session reads the truncated table anew');
my ($o4) = $sout =~ /^o4\|(\d+)$/m;
is($o4, $o3 - $cfiles + $cnow,
	"after TRUNCATE the session keeps none of the old files' readers ($cfiles before, $cnow now)");

$in .= "\\q\n";
$sess->finish;

# Decoded manifests: every flush makes a new version of a table's
# manifest, and a backend used to keep every version it had read for its
# lifetime.  In one session, 30 rounds of a write, a flush (a new version)
# and reads of both tables, also of a version held through a transaction;
# the session keeps the newest version of each table and what its current
# transaction reads, not one per flush.
$sql = '';
for my $i (1 .. 30)
{
	$sql .= "INSERT INTO a VALUES (" . (100000 + $i) . ", 'm$i');\n";
	$sql .= "INSERT INTO ah VALUES (" . (100000 + $i) . ", 'm$i');\n";
	$sql .= "SELECT forst.checkpoint() IS NOT NULL;\n";
	$sql .= "BEGIN;\n" if $i % 5 == 0;
	$sql .= "SELECT 'm$i', (SELECT count(*) FROM a WHERE k > 100000) = (SELECT count(*) FROM ah WHERE k > 100000), "
	  . "(SELECT v FROM b WHERE k = $i * 7) IS NOT DISTINCT FROM (SELECT v FROM bh WHERE k = $i * 7);\n";
	$sql .= "SELECT 'n$i', manifests FROM forst.session_sst_readers();\n";
	$sql .= "COMMIT;\n" if $i % 5 == 0;
}
$out = $node->safe_psql('postgres', $sql);
my @m = grep { /^m\d+\|/ } split /\n/, $out;
is(scalar(@m), 30, 'all manifest rounds ran');
is(join(',', grep { !/\|t\|t$/ } @m), '', 'reads across 30 manifest versions equal the heap twins');
my ($most) = sort { $b <=> $a } map { /^n\d+\|(\d+)$/ ? $1 : () } split /\n/, $out;
cmp_ok($most, '<=', 10, "the session keeps at most $most manifests over 30 versions of a table");

# the bound is a setting like work_mem: any user, any value from 0
is($node->psql('postgres', q{SET forst.sst_reader_memory = -1}), 3, 'a negative bound is refused');
is($node->safe_psql('postgres', q{SET forst.sst_reader_memory = '2MB'; SHOW forst.sst_reader_memory}),
	'2MB', 'the bound is set per session');

$node->stop;
done_testing();
