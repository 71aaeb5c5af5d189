# CREATE INDEX CONCURRENTLY and DROP INDEX CONCURRENTLY on a forst table while clients insert, update (the indexed column, the partial index's
# column, the key) and delete rows: neither blocks them, and once
# the writes stop every index answers exactly as a sequential scan does.
# Writers write the entries of an index from the moment they see it; the
# build writes those of the rows its snapshot sees, and an entry it puts
# after a writer replaced the row is never returned.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $node = PostgreSQL::Test::Cluster->new('cic');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'forst'");
# small memtables: entries go to SST files while the builds run
$node->append_conf('postgresql.conf', "forst.memtable_size = '1MB'");
$node->append_conf('postgresql.conf', slurp_file($ENV{FORST_TAP_EXTRA_CONF}))
  if $ENV{FORST_TAP_EXTRA_CONF};
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE t (k int PRIMARY KEY, a int, c text) USING forst;
INSERT INTO t SELECT g, g % 1000, CASE WHEN g % 3 = 0 THEN 'y' ELSE 'n' END
  FROM generate_series(1, 30000) g;
});

my $script = $node->basedir . '/writes.sql';
open(my $fh, '>', $script) or die "cannot write $script: $!";
print $fh q{\set k random(1, 40000)
\set a random(0, 999)
\set r random(1, 6)
BEGIN;
UPDATE t SET a = :a WHERE k = :k AND :r = 1;
UPDATE t SET c = CASE c WHEN 'y' THEN 'n' ELSE 'y' END WHERE k = :k AND :r = 2;
INSERT INTO t VALUES (:k, :a, 'y') ON CONFLICT (k) DO UPDATE SET a = excluded.a WHERE :r = 3;
DELETE FROM t WHERE k = :k AND :r = 4;
UPDATE t SET k = k + 40000 WHERE k = :k AND :r = 5 AND NOT EXISTS (SELECT 1 FROM t WHERE k = :k + 40000);
DELETE FROM t WHERE k > 40000 AND k % 7 = :r;
COMMIT;
};
close($fh);

my ($out, $err) = ('', '');
my $started = time();
my $bench = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '2', '-T', '12', '-f', $script,
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$out, '2>', \$err);
sleep(1);

$node->safe_psql('postgres', 'CREATE INDEX CONCURRENTLY t_a ON t (a)');
$node->safe_psql('postgres',
	"CREATE INDEX CONCURRENTLY t_ay ON t (a) WHERE c = 'y'");
$node->safe_psql('postgres',
	'CREATE INDEX CONCURRENTLY t_expr ON t ((a % 10), k)');
my $built = time();
$bench->finish;
my $ended = time();

is($bench->result(0), 0, 'the writers ran without an error') or diag($err);
my ($tps) = $out =~ /number of transactions actually processed: (\d+)/;
ok(defined $tps && $tps > 100, "the writers committed while the indexes were built ($tps transactions)");
ok($built < $ended - 0.5,
	sprintf('the builds ended while the writers still ran (%.1f s of %.1f s)',
		$built - $started, $ended - $started));
is( $node->safe_psql('postgres',
		"SELECT string_agg(indexrelid::regclass || ':' || (indisvalid AND indisready), ' ' ORDER BY indexrelid::regclass::text) "
		  . "FROM pg_index WHERE indrelid = 't'::regclass"),
	't_a:true t_ay:true t_expr:true t_pkey:true',
	'the indexes are valid and ready, no copy left behind');

# each query through an index, and the same by a sequential scan
my @queries = (
	'SELECT k, a FROM t WHERE a = 7 ORDER BY k',
	'SELECT k FROM t WHERE a BETWEEN 100 AND 180 ORDER BY k',
	'SELECT count(*), sum(k) FROM t WHERE a >= 0',
	"SELECT k FROM t WHERE c = 'y' AND a BETWEEN 300 AND 420 ORDER BY k",
	"SELECT count(*), sum(k) FROM t WHERE c = 'y' AND a >= 0",
	'SELECT k FROM t WHERE a % 10 = 3 AND k < 5000 ORDER BY k');
for my $q (@queries)
{
	my $digest = "SELECT count(*) || ':' || md5(coalesce(string_agg(q::text, ','), '')) FROM ($q) q";
	my $by_index = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_bitmapscan = off; $digest");
	my $plan = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_bitmapscan = off; EXPLAIN (COSTS OFF) $q");
	my $by_seq = $node->safe_psql('postgres',
		"SET enable_indexscan = off; SET enable_bitmapscan = off; $digest");
	like($plan, qr/Index Scan using t_(a|ay|expr) /, "through an index: $q");
	is($by_index, $by_seq, "as a sequential scan: $q");
}

# DROP INDEX CONCURRENTLY while the writers run again: the drops do not
# block them, and the index that stays answers as a sequential scan does
($out, $err) = ('', '');
$started = time();
$bench = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '2', '-T', '8', '-f', $script,
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$out, '2>', \$err);
sleep(1);
$node->safe_psql('postgres', 'DROP INDEX CONCURRENTLY t_expr');
$node->safe_psql('postgres', 'DROP INDEX CONCURRENTLY t_ay');
my $dropped = time();
$bench->finish;
$ended = time();
is($bench->result(0), 0, 'the writers ran without an error during the drops') or diag($err);
($tps) = $out =~ /number of transactions actually processed: (\d+)/;
ok(defined $tps && $tps > 100, "the writers committed while the indexes were dropped ($tps transactions)");
ok($dropped < $ended - 0.5,
	sprintf('the drops ended while the writers still ran (%.1f s of %.1f s)',
		$dropped - $started, $ended - $started));
is( $node->safe_psql('postgres',
		"SELECT string_agg(indexrelid::regclass::text, ' ' ORDER BY indexrelid::regclass::text) "
		  . "FROM pg_index WHERE indrelid = 't'::regclass"),
	't_a t_pkey', 'the dropped indexes are gone');
for my $q (@queries[0 .. 2])
{
	my $digest = "SELECT count(*) || ':' || md5(coalesce(string_agg(q::text, ','), '')) FROM ($q) q";
	my $by_index = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_bitmapscan = off; $digest");
	my $by_seq = $node->safe_psql('postgres',
		"SET enable_indexscan = off; SET enable_bitmapscan = off; $digest");
	is($by_index, $by_seq, "after the drops, as a sequential scan: $q");
}

# refused, before anything is built
my ($rc, $o, $e) = $node->psql('postgres', 'CREATE UNIQUE INDEX CONCURRENTLY t_u ON t (a, k)');
like($e, qr/CREATE UNIQUE INDEX CONCURRENTLY is not supported on forst tables/,
	'CREATE UNIQUE INDEX CONCURRENTLY is refused');
($rc, $o, $e) = $node->psql('postgres', 'REINDEX TABLE CONCURRENTLY t');
like($e, qr/cannot reindex table "t" concurrently: it has indexes of forst tables/,
	'REINDEX TABLE CONCURRENTLY is refused');
($rc, $o, $e) = $node->psql('postgres', 'REINDEX INDEX CONCURRENTLY t_a');
like($e, qr/cannot reindex index "t_a" concurrently/, 'REINDEX INDEX CONCURRENTLY is refused');
$node->safe_psql('postgres', q{
CREATE TABLE pt (k int, ts timestamptz, PRIMARY KEY (k, ts)) PARTITION BY RANGE (ts);
CREATE TABLE pt1 PARTITION OF pt FOR VALUES FROM ('2026-01-01') TO ('2027-01-01') USING forst;
CREATE TABLE tt (k int PRIMARY KEY, a int, ts timestamptz) USING forst;
SELECT forst.set_ttl('tt', 'ts', '1 hour');
});
($rc, $o, $e) = $node->psql('postgres', 'REINDEX TABLE CONCURRENTLY pt');
like($e, qr/cannot reindex table "pt" concurrently/,
	'REINDEX CONCURRENTLY of a partitioned table with forst partitions is refused');
($rc, $o, $e) = $node->psql('postgres', 'REINDEX SCHEMA CONCURRENTLY public');
like($e, qr/cannot reindex schema "public" concurrently/, 'REINDEX SCHEMA CONCURRENTLY is refused');
($rc, $o, $e) = $node->psql('postgres', 'CREATE INDEX CONCURRENTLY tt_a ON tt (a)');
like($e, qr/CREATE INDEX CONCURRENTLY is not supported on forst table "tt", whose rows expire/,
	'CREATE INDEX CONCURRENTLY on a table whose rows expire is refused');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname LIKE '%ccnew%' OR relname IN ('t_u', 'tt_a')"),
	'0', 'no invalid index left behind');
ok(!$node->log_contains('TRAP|terminated by signal'), 'no crash');

done_testing();
