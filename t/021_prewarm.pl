# forst.prewarm: a table's SST metadata (and with data => true, its files,
# as far as the disk cache holds them) read into an empty disk cache past
# its admission filter, so that later sessions read without going to the
# object store; a second prewarm fetches nothing; a table larger than the
# cache is prewarmed up to the cache's size with a NOTICE; errors for a
# heap table and for a server without a disk cache.
use strict;
use warnings;

use File::Path qw(rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $cache_kb = 6144;

my $node = PostgreSQL::Test::Cluster->new('prewarm');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
forst.memtable_size = '1MB'
forst.memtable_memory = '4MB'
forst.block_cache_size = '256kB'
forst.shared_block_cache_size = 0
forst.cache_size = '${cache_kb}kB'
});
$node->start;
my $cache_dir = $node->data_dir . '/forst/cache';

# f: ~2 MB, g: ~12 MB (twice the cache) of incompressible rows
$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE f (k int PRIMARY KEY, v text) USING forst;
CREATE TABLE g (k int PRIMARY KEY, v text) USING forst;
CREATE TABLE h (k int PRIMARY KEY, v text);
INSERT INTO f SELECT i, md5(i::text) || md5((i + 1)::text) || md5((i + 2)::text) || md5((i + 3)::text)
  FROM generate_series(1, 15000) i;
});
for my $r (0 .. 5)
{
	my $lo = $r * 15000 + 1;
	my $hi = ($r + 1) * 15000;
	$node->safe_psql('postgres', qq{
INSERT INTO g SELECT i, md5(i::text) || md5((i + 1)::text) || md5((i + 2)::text) || md5((i + 3)::text)
  FROM generate_series($lo, $hi) i;
});
}
$node->safe_psql('postgres', 'SELECT forst.checkpoint()');
my $expect_f = $node->safe_psql('postgres', 'SELECT count(*), sum(length(v)), md5(string_agg(v, \',\' ORDER BY k)) FROM f');
my ($f_files, $f_bytes) = split /\|/, $node->safe_psql('postgres',
	q{SELECT count(*), sum(size) FROM forst.table_files('f')});
cmp_ok($f_files, '>', 0, "f has $f_files SST files");

# compactions settle first (the file count stays for 2 s): their output
# enters the cache as it is written
my $prev = -1;
for (1 .. 60)
{
	my $n = $node->safe_psql('postgres', q{SELECT count(*) FROM forst.table_files('f')});
	last if $n == $prev;
	$prev = $n;
	sleep 2;
}

# an empty cache, as on a server that just attached the table
$node->stop;
rmtree($cache_dir);
$node->start;
$node->poll_query_until('postgres', 'SELECT cache_ready FROM forst.stats')
  or die 'cache not ready';
$node->safe_psql('postgres', 'SELECT forst.stats_reset()');

($f_files, $f_bytes) = split /\|/, $node->safe_psql('postgres',
	q{SELECT count(*), sum(size) FROM forst.table_files('f')});
my ($files, $skipped, $read, $fetched, $data) = split /\|/,
  $node->safe_psql('postgres', q{SELECT * FROM forst.prewarm('f')});
is($files + $skipped, $f_files, "metadata prewarm read every file ($files, $skipped skipped)");
cmp_ok($fetched, '>', 0, "metadata fetched from the store ($fetched bytes)");
cmp_ok($fetched, '<', $f_bytes, 'metadata only: less than the files');
is($data, 0, 'no data without data => true');
is($node->safe_psql('postgres', 'SELECT cache_entries > 0 FROM forst.stats'), 't',
	'the cache holds the metadata (past the admission filter)');
($files, $skipped, $read, $fetched) = split /\|/,
  $node->safe_psql('postgres', q{SELECT * FROM forst.prewarm('f')});
is($fetched, 0, 'a second metadata prewarm fetches nothing');
cmp_ok($read, '>', 0, 'and reads it from the cache');

# data: every byte of f, then a new session scans it without the store
($files, $skipped, $read, $fetched, $data) = split /\|/,
  $node->safe_psql('postgres', q{SELECT * FROM forst.prewarm('f', data => true)});
is($data, $f_bytes, "data prewarm read all $f_bytes bytes of f");
$node->safe_psql('postgres', 'SELECT forst.stats_reset()');
is($node->safe_psql('postgres', 'SELECT count(*), sum(length(v)), md5(string_agg(v, \',\' ORDER BY k)) FROM f'),
	$expect_f, 'f reads the same after prewarm');
is($node->safe_psql('postgres', 'SELECT cache_misses, store_get_range, cache_hits > 0 FROM forst.stats'),
	'0|0|t', 'a new session scans f from the cache alone');

# g is twice the cache: prewarmed up to the cache's size, with a NOTICE
my ($ret, $out, $err) = $node->psql('postgres',
	q{SELECT data_bytes FROM forst.prewarm('g', data => true)});
is($ret, 0, 'prewarm of a table larger than the cache succeeds');
like($err, qr/only the newest are prewarmed/, 'with a NOTICE');
cmp_ok($out, '>', $cache_kb * 1024 / 2, "it read $out bytes of data, files cut at the room left");
cmp_ok($out, '<=', $cache_kb * 1024 * 0.9, 'no more than 90% of the cache');
is($node->safe_psql('postgres', "SELECT cache_bytes_used <= $cache_kb * 1024 FROM forst.stats"),
	't', 'the cache stays within its bound');

# errors
($ret, $out, $err) = $node->psql('postgres', q{SELECT * FROM forst.prewarm('h')},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/42809: "h" is not a forst table/, 'heap table refused (42809)');
$node->append_conf('postgresql.conf', "forst.cache_size = 0\n");
$node->restart;
($ret, $out, $err) = $node->psql('postgres', q{SELECT * FROM forst.prewarm('f')},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/55000: forst: prewarm needs the local disk cache/, 'no disk cache: 55000');
like($err, qr/HINT:  Set forst.cache_size/, 'with a hint');
is($node->safe_psql('postgres', 'SELECT count(*), sum(length(v)), md5(string_agg(v, \',\' ORDER BY k)) FROM f'),
	$expect_f, 'f still reads the same');

$node->stop;
done_testing();
