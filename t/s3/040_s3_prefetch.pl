# Parallel fetch-ahead on s3:// (run by the s3 step of scripts/test.sh with
# the S3 server's client environment):
#
#  - a range scan over all 128 key groups on a fresh server (empty disk
#    cache) with forst.scan_prefetch on: the first blocks of every key
#    group's range and the metadata of the files come in parallel batches,
#    so that the cursors' own reads nearly all hit the disk cache; with it
#    off, every one of them is a miss; the answers equal a heap twin's
#    either way;
#  - forst.prewarm on s3://: the metadata of all files fetched, a second
#    prewarm fetches nothing; with data => true a new session scans the
#    table from the disk cache alone;
#  - with a disk cache too small for a scan's ranges (1 MB), the ranges are
#    held in memory (src/am/read/stage.h): a scan over 40% of the table
#    takes a handful of coalesced GETs instead of one per read window, and
#    answers as the heap twin does, also after writes in memtables, with
#    a batch upsert staging in the same transaction, and for a scan that
#    stops early (LIMIT); a nested loop's rescans of one range reuse what
#    it staged.
use strict;
use warnings;

use File::Path qw(rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my ($ep, $bucket) = ($ENV{S3_ENDPOINT}, $ENV{S3_BUCKET});
my ($ak, $sk) = ($ENV{AWS_ACCESS_KEY_ID}, $ENV{AWS_SECRET_ACCESS_KEY});
plan skip_all => 'no S3 server (S3_ENDPOINT unset)' unless $ep && $bucket && $ak && $sk;

my $prefix = "tap-prefetch-$$-" . int(time);
my $node = PostgreSQL::Test::Cluster->new('s3prefetch');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
forst.remote_dir = 's3://$bucket/$prefix'
forst.memtable_size = '1MB'
forst.memtable_memory = '8MB'
forst.block_cache_size = '256kB'
forst.shared_block_cache_size = 0
forst.cache_size = '256MB'
});
$node->start;
my $cache_dir = $node->data_dir . '/forst/cache';

# ~6 MB of incompressible rows in several files, a heap twin
$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE f (k int PRIMARY KEY, v text) USING forst;
CREATE TABLE h (k int PRIMARY KEY, v text);
});
for my $r (0 .. 3)
{
	my $lo = $r * 12000 + 1;
	my $hi = ($r + 1) * 12000;
	$node->safe_psql('postgres', qq{
INSERT INTO f SELECT i, md5(i::text) || md5((i + 1)::text) || md5((i + 2)::text) || md5((i + 3)::text)
  FROM generate_series($lo, $hi) i;
INSERT INTO h SELECT * FROM f WHERE k BETWEEN $lo AND $hi;
});
}
$node->safe_psql('postgres', 'SELECT forst.checkpoint()');
my $nfiles = $node->safe_psql('postgres', q{SELECT count(*) FROM forst.table_files('f')});
cmp_ok($nfiles, '>=', 2, "f has $nfiles SST files on S3");

my $probe = q{SELECT count(*), sum(length(v)), md5(string_agg(v, ',' ORDER BY k)) FROM %s WHERE k BETWEEN 20001 AND 21000};
my $want = $node->safe_psql('postgres', sprintf($probe, 'h'));

# waits until compactions have settled: f's file count stays the same for
# two seconds (compaction output enters the disk cache as it is written)
sub settle
{
	my $prev = -1;
	for (1 .. 60)
	{
		my $n = $node->safe_psql('postgres', q{SELECT count(*) FROM forst.table_files('f')});
		return if $n == $prev;
		$prev = $n;
		sleep 2;
	}
}

# a fresh server: empty disk cache
sub fresh
{
	$node->stop;
	rmtree($cache_dir);
	$node->start;
	$node->poll_query_until('postgres', 'SELECT cache_ready FROM forst.stats')
	  or die 'cache not ready';
	$node->safe_psql('postgres', 'SELECT forst.stats_reset()');
}

my %misses;
for my $mode ('off', 'on')
{
	settle();
	fresh();
	my $got = $node->safe_psql('postgres',
		"SET forst.scan_prefetch = $mode; SET enable_seqscan = off; " . sprintf($probe, 'f'));
	is($got, $want, "range scan on a fresh server, prefetch $mode: equals the heap twin");
	my ($m, $h, $gets) = split /\|/, $node->safe_psql('postgres',
		'SELECT cache_misses, cache_hits, store_get_range FROM forst.stats');
	$misses{$mode} = $m;
	note("prefetch $mode: $m misses, $h hits, $gets ranged GETs");
}
cmp_ok($misses{off}, '>=', 128, "without prefetch, every key group's first read misses ($misses{off})");
cmp_ok($misses{on} * 10, '<', $misses{off},
	"with prefetch, the cursors' reads hit the disk cache ($misses{on} misses)");

# prewarm on s3://: once compactions have settled (the file count stays
# the same for two seconds; compaction output enters the cache as it is
# written), on a fresh server
settle();
fresh();
my $settled = $node->safe_psql('postgres', q{SELECT count(*) FROM forst.table_files('f')});
my ($files, $skipped, $read, $fetched) = split /\|/,
  $node->safe_psql('postgres', q{SELECT * FROM forst.prewarm('f')});
is($files + $skipped, $settled, "prewarm read the metadata of every file ($files, $skipped skipped)");
cmp_ok($fetched, '>', 0, "fetched from S3 ($fetched bytes)");
(undef, undef, undef, $fetched) = split /\|/,
  $node->safe_psql('postgres', q{SELECT * FROM forst.prewarm('f')});
is($fetched, 0, 'a second prewarm fetches nothing');
my $data = $node->safe_psql('postgres', q{SELECT data_bytes FROM forst.prewarm('f', data => true)});
is($data, $node->safe_psql('postgres', q{SELECT sum(size) FROM forst.table_files('f')}),
	'data prewarm read every byte');
$node->safe_psql('postgres', 'SELECT forst.stats_reset()');
is($node->safe_psql('postgres', q{SELECT count(*), md5(string_agg(v, ',' ORDER BY k)) FROM f}),
	$node->safe_psql('postgres', q{SELECT count(*), md5(string_agg(v, ',' ORDER BY k)) FROM h}),
	'f equals its twin after prewarm');
is($node->safe_psql('postgres', 'SELECT cache_misses, store_get_range FROM forst.stats'),
	'0|0', 'a new session scans f from the disk cache alone');

# a disk cache of 1 MB: a scan's ranges (about 2.4 MB) pass an eighth of it
$node->append_conf('postgresql.conf', "forst.cache_size = '1MB'\n");
my $wide = q{SELECT count(*), sum(length(v)), md5(string_agg(v, ',' ORDER BY k)) FROM %s WHERE k BETWEEN 5001 AND 24000};
my $wide_want = $node->safe_psql('postgres', sprintf($wide, 'h'));
my %gets;
for my $mode ('off', 'on')
{
	fresh();
	my $got = $node->safe_psql('postgres',
		"SET forst.scan_prefetch = $mode; SET enable_seqscan = off; " . sprintf($wide, 'f'));
	is($got, $wide_want, "wide range scan with a 1 MB disk cache, prefetch $mode: equals the heap twin");
	my ($g, $b) = split /\|/, $node->safe_psql('postgres',
		'SELECT store_get_range, store_bytes_read FROM forst.stats');
	$gets{$mode} = $g;
	note("wide scan, prefetch $mode: $g ranged GETs, $b bytes");
}
cmp_ok($gets{off}, '>=', 200, "without prefetch, the scan reads window by window ($gets{off} GETs)");
cmp_ok($gets{on} * 10, '<', $gets{off},
	"with prefetch, its ranges come held in memory by few GETs ($gets{on})");

# a nested loop scanning the same range again for each outer row keeps
# what it staged: four rescans cost about the GETs of one scan
my $rescans = q{SELECT g, x.* FROM generate_series(1, 4) g,
  LATERAL (SELECT count(*), md5(string_agg(v, ',' ORDER BY k)) FROM %s WHERE k BETWEEN 5001 AND 24000 + g * 0) x
  ORDER BY g};
fresh();
is($node->safe_psql('postgres', 'SET enable_seqscan = off; ' . sprintf($rescans, 'f')),
	$node->safe_psql('postgres', sprintf($rescans, 'h')),
	'four rescans of the wide range: the heap twin\'s answers');
my $rescan_gets = $node->safe_psql('postgres', 'SELECT store_get_range FROM forst.stats');
cmp_ok($rescan_gets, '<', 2 * $gets{on},
	"the rescans keep the staged ranges ($rescan_gets GETs for four scans, $gets{on} for one)");

# the same scan again with rows in memtables over the files, then with a
# batch upsert staging its own blocks in the same transaction between two
# scans, and a scan that stops early: the heap twin's answers each time
$node->safe_psql('postgres', q{
UPDATE f SET v = v || 'x' WHERE k % 7 = 0 AND k BETWEEN 5001 AND 24000;
UPDATE h SET v = v || 'x' WHERE k % 7 = 0 AND k BETWEEN 5001 AND 24000;
DELETE FROM f WHERE k % 11 = 0 AND k BETWEEN 9000 AND 12000;
DELETE FROM h WHERE k % 11 = 0 AND k BETWEEN 9000 AND 12000;
});
fresh();
is($node->safe_psql('postgres', 'SET enable_seqscan = off; ' . sprintf($wide, 'f')),
	$node->safe_psql('postgres', sprintf($wide, 'h')),
	'wide scan over memtable rows and files: equals the heap twin');
my $mixed = q{
SET enable_seqscan = off;
BEGIN;
SELECT count(*), md5(string_agg(v, ',' ORDER BY k)) FROM %1$s WHERE k BETWEEN 1 AND 15000;
INSERT INTO %1$s (k, v) SELECT i * 13 %% 48000 + 1, 'batch' FROM generate_series(1, 3000) i
    ON CONFLICT (k) DO UPDATE SET v = left(%1$s.v, 20) || 'b';
SELECT count(*), md5(string_agg(v, ',' ORDER BY k)) FROM %1$s WHERE k BETWEEN 10000 AND 30000;
SELECT k, v FROM %1$s WHERE k BETWEEN 20000 AND 40000 ORDER BY k LIMIT 3;
COMMIT;
};
is($node->safe_psql('postgres', sprintf($mixed, 'f')), $node->safe_psql('postgres', sprintf($mixed, 'h')),
	'scans around a staged batch upsert in one transaction, and a LIMIT: the heap twin\'s answers');
is($node->safe_psql('postgres', q{SELECT count(*), md5(string_agg(v, ',' ORDER BY k)) FROM f}),
	$node->safe_psql('postgres', q{SELECT count(*), md5(string_agg(v, ',' ORDER BY k)) FROM h}),
	'f equals its twin after them');

$node->stop;
done_testing();
