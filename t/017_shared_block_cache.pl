# The shared block cache (src/am/read/shared_blocks.c): a block one backend
# decoded is found by another; a ring much smaller than the table is
# overwritten all the time under concurrent point reads, range scans and
# writes, and no read ever returns a wrong row; the cache can be turned off.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('sbc');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
wal_level = replica
max_wal_senders = 0
forst.memtable_size = '1MB'
forst.block_cache_size = '256kB'
forst.shared_block_cache_size = '1MB'
forst.checkpoint_interval = 0
});
$node->append_conf('postgresql.conf', slurp_file($ENV{FORST_TAP_EXTRA_CONF}))
  if $ENV{FORST_TAP_EXTRA_CONF};
$node->start;

sub sql { return $node->safe_psql('postgres', $_[0]); }

sql(q{
CREATE EXTENSION forst;
CREATE TABLE r (k bigint PRIMARY KEY, v text NOT NULL) USING forst;
INSERT INTO r SELECT g, md5(g::text) FROM generate_series(1, 200000) g;
SELECT forst.checkpoint();
});
is(sql('SELECT count(*) FROM forst.table_files(\'r\')') > 0 ? 'files' : 'none', 'files',
	'the rows are in SST files');
is(sql('SELECT capacity FROM forst.shared_block_cache()'), 1024 * 1024, 'a ring of 1 MB');

# a block one backend read is found by the next backend
my $hot = 'SELECT ' . join(' + ', map { "(SELECT count(*) FROM r WHERE k = $_ AND v = md5(k::text))" }
	  (11, 222, 3333, 44444, 155555));
# (a compaction finishing in between would give the second backend other
# files, other blocks: then try again)
my $files_q = q{SELECT string_agg(file_id::text, ',' ORDER BY file_id) FROM forst.table_files('r')};
my ($first, $second, $hits0, $hits1, $same) = ('', '', 0, 0, 0);
for my $try (1 .. 20)
{
	my $files = sql($files_q);
	$first = sql($hot);
	$hits0 = sql('SELECT hits FROM forst.shared_block_cache()');
	$second = sql($hot);
	$hits1 = sql('SELECT hits FROM forst.shared_block_cache()');
	$same = sql($files_q) eq $files;
	last if $same;
	sleep 1;
}
is($first, '5', 'five hot rows read in one backend');
is($second, '5', 'and again in another');
ok($same, 'the table\'s files stayed the same in between');
cmp_ok($hits1 - $hits0, '>=', 5, 'the second backend found their blocks in the shared cache');

# churn: point reads and range scans that check every row, while a writer
# rewrites rows (same values: new versions, flushes, compactions)
my $reads = $node->basedir . '/reads.sql';
append_to_file($reads, q{
\set k random(1, 200000)
\set a random(1, 199000)
SELECT 1 / (count(*) = 1 AND bool_and(v = md5(k::text)))::int FROM r WHERE k = :k;
SELECT 1 / (count(*) = 301 AND bool_and(v = md5(k::text)))::int FROM r WHERE k BETWEEN :a AND :a + 300;
});
my $writes = $node->basedir . '/writes.sql';
append_to_file($writes, q{
\set k random(1, 200000)
UPDATE r SET v = md5(k::text) WHERE k BETWEEN :k AND :k + 20;
});
my $bindir = $node->config_data('--bindir');
my ($rout, $rerr, $wout, $werr) = ('', '', '', '');
my $rb = IPC::Run::start(
	[ "$bindir/pgbench", '-n', '-c', '3', '-T', '15', '-f', $reads, '-h', $node->host,
	  '-p', $node->port, 'postgres' ], '>', \$rout, '2>', \$rerr);
my $wb = IPC::Run::start(
	[ "$bindir/pgbench", '-n', '-c', '1', '-T', '15', '-f', $writes, '-h', $node->host,
	  '-p', $node->port, 'postgres' ], '>', \$wout, '2>', \$werr);
$rb->finish;
$wb->finish;
like($rout, qr/number of transactions actually processed: [1-9]/, 'the readers ran');
unlike($rerr, qr/aborted|division by zero|ERROR/, 'no reader met a missing or wrong row')
  or diag($rerr);
like($wout, qr/number of transactions actually processed: [1-9]/, 'the writer ran');

my ($used, $cap, $hits, $inserts) =
  split /\|/, sql('SELECT bytes_used, capacity, hits, inserts FROM forst.shared_block_cache()');
cmp_ok($used, '<=', $cap, 'the ring never holds more than its size');
cmp_ok($inserts, '>', 100, "the ring was refilled many times ($inserts blocks put)");
cmp_ok($hits, '>', $hits1, 'and served hits meanwhile');
is(sql('SELECT count(*) || \'/\' || bool_and(v = md5(k::text)) FROM r'), '200000/true',
	'every row intact after the churn');

# turned off: reads work, the function says so
$node->append_conf('postgresql.conf', "forst.shared_block_cache_size = 0\n");
$node->restart;
is(sql($hot), '5', 'reads without the shared cache');
is(sql('SELECT capacity || \'/\' || hits FROM forst.shared_block_cache()'), '0/0',
	'no shared cache when its size is 0');
ok(!$node->log_contains('TRAP|terminated by signal'), 'no crash');

done_testing();
