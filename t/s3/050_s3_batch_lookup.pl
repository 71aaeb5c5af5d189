# Batched key lookups of INSERT ... ON CONFLICT on s3:// (forst.batch_lookups,
# src/am/write/batch_lookup.c), against the S3 server of scripts/test.sh:
#
#  - on a fresh server (empty disk cache), a batch upsert of 3,500 keys
#    spread over the table: with batching, the blocks its lookups read come
#    in parallel batches and the lookups' own reads nearly all hit the disk
#    cache; without, each is a miss; the table equals a heap twin either way;
#  - the same for "k = ANY(array)" through the key index (a SELECT), and
#    for the rows a range of a secondary index names (read ahead);
#  - EXPLAIN shows the node and what it did; it is not planned for one row,
#    and it is for an upsert inside a data-modifying WITH;
#  - under concurrent writers (pgbench: batch upserts with batching on or off
#    at random, single-row upserts and deletes, each transaction applying
#    the same change to the forst table and to its heap twin, and reading
#    a "k = ANY(array)" of both, which must agree; the same for a row moved
#    in a secondary index and a range of it), the two end equal:
#    batching changes which reads are cached, never an answer;
#  - with a disk cache too small for a batch (1 MB), the batch's blocks are
#    held in memory: far fewer GETs, coalesced, the lookups reading them
#    there; the same answers, also under the concurrent writers.
use strict;
use warnings;

use File::Path qw(rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my ($ep, $bucket) = ($ENV{S3_ENDPOINT}, $ENV{S3_BUCKET});
my ($ak, $sk) = ($ENV{AWS_ACCESS_KEY_ID}, $ENV{AWS_SECRET_ACCESS_KEY});
plan skip_all => 'no S3 server (S3_ENDPOINT unset)' unless $ep && $bucket && $ak && $sk;

my $prefix = "tap-batch-$$-" . int(time);
my $node = PostgreSQL::Test::Cluster->new('s3batch');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
forst.remote_dir = 's3://$bucket/$prefix'
forst.memtable_size = '1MB'
forst.memtable_memory = '8MB'
forst.block_cache_size = '256kB'
forst.shared_block_cache_size = 0
forst.cache_size = '256MB'
forst.checkpoint_interval = 0
});
$node->start;
my $cache_dir = $node->data_dir . '/forst/cache';

# ~6 MB of incompressible rows in several files, a heap twin
$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE f (k int PRIMARY KEY, v text, n bigint NOT NULL DEFAULT 0) USING forst;
CREATE TABLE h (k int PRIMARY KEY, v text, n bigint NOT NULL DEFAULT 0);
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

# waits until compactions have settled: f's file count stays the same for
# two seconds (compaction output enters the disk cache as it is written)
sub settle
{
	my ($t) = @_;
	my $prev = -1;
	$t //= 'f';
	for (1 .. 60)
	{
		my $n = $node->safe_psql('postgres', qq{SELECT count(*) FROM forst.table_files('$t')});
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

# On a fresh server, the query $sql on forst table $t with forst.batch_lookups
# $mode (and the settings $set) gives the heap twin $th's answer; returns
# its disk cache misses.
sub fresh_read
{
	my ($set, $mode, $sql, $t, $th, $what) = @_;
	fresh();
	my $got = $node->safe_psql('postgres',
		"${set}SET forst.batch_lookups = $mode; " . sprintf($sql, $t));
	my ($m, $gets) = split /\|/, $node->safe_psql('postgres',
		'SELECT cache_misses, store_get_range FROM forst.stats');
	is($got, $node->safe_psql('postgres', sprintf($sql, $th)),
		"$what $mode, on a fresh server: the heap twin's answer");
	note("$what, $mode: $m misses, $gets ranged GETs");
	return $m;
}

my $digest = q{SELECT count(*), sum(n), md5(string_agg(k || ':' || v || ':' || n, ',' ORDER BY k)) FROM %s};

# 3,500 keys spread over the whole table (every 16th), 500 of them new
my $upsert = q{
INSERT INTO %s AS t (k, v, n)
SELECT i, 'new ' || i, %d FROM generate_series(1, 56000, 16) i
ON CONFLICT (k) DO UPDATE SET n = t.n + excluded.n};

my %misses;
my $round = 0;
for my $mode ('off', 'on')
{
	$round++;
	settle();
	fresh();
	$node->safe_psql('postgres', "SET forst.batch_lookups = $mode; " . sprintf($upsert, 'f', $round));
	my ($m, $hits, $gets) = split /\|/, $node->safe_psql('postgres',
		'SELECT cache_misses, cache_hits, store_get_range FROM forst.stats');
	$node->safe_psql('postgres', sprintf($upsert, 'h', $round));
	is($node->safe_psql('postgres', sprintf($digest, 'f')),
		$node->safe_psql('postgres', sprintf($digest, 'h')),
		"batch upsert on a fresh server, batching $mode: f equals its heap twin");
	$misses{$mode} = $m;
	note("batching $mode: $m misses, $hits hits, $gets ranged GETs");
	# the round's writes into SST files: a restart must not bring them back
	# into a memtable (WAL replay), where the next round would find them
	$node->safe_psql('postgres', 'SELECT forst.checkpoint()');
}
cmp_ok($misses{off}, '>=', 1000, "without batching, the lookups miss one by one ($misses{off})");
cmp_ok($misses{on} * 10, '<', $misses{off},
	"with batching, the lookups' reads hit the disk cache ($misses{on} misses)");

# "k = ANY(array)" through the key index: its lookups' blocks are fetched
# together in the same way, a chunk of forst.batch_lookup_rows keys at a time
my $any = q{SELECT count(*), sum(n), md5(string_agg(k || ':' || v || ':' || n, ',' ORDER BY k))
  FROM %s WHERE k = ANY(ARRAY(SELECT generate_series(3, 56000, 16)))};
like($node->safe_psql('postgres', 'SET enable_seqscan = off; EXPLAIN (COSTS OFF) ' . sprintf($any, 'f')),
	qr/Index Scan using f_pkey on f/, 'k = ANY(array) is an index scan of the key');
my %any_misses;
$any_misses{$_} = fresh_read('SET enable_seqscan = off; SET forst.batch_lookup_rows = 1024; ',
	$_, $any, 'f', 'h', 'k = ANY(3,500 keys), batching') for ('off', 'on');
cmp_ok($any_misses{off}, '>=', 1000, "k = ANY without batching: lookups miss one by one ($any_misses{off})");
cmp_ok($any_misses{on} * 10, '<', $any_misses{off},
	"k = ANY with batching: the lookups' reads hit the disk cache ($any_misses{on} misses)");

# a range of a secondary index: 3,500 entries in the index's order name
# rows spread over the whole table; the scan reads entries ahead and has
# their rows' blocks fetched together, as the batches above
$node->safe_psql('postgres', q{
CREATE TABLE g (k int PRIMARY KEY, a int NOT NULL, v text) USING forst;
CREATE TABLE gh (k int PRIMARY KEY, a int NOT NULL, v text);
CREATE INDEX g_a ON g (a);
CREATE INDEX gh_a ON gh (a);
});
for my $r (0 .. 3)
{
	my $lo = $r * 12000 + 1;
	my $hi = ($r + 1) * 12000;
	$node->safe_psql('postgres', qq{
INSERT INTO g SELECT i, (i * 7919) % 48000, md5(i::text) || md5((i + 1)::text) || md5((i + 2)::text) || md5((i + 3)::text)
  FROM generate_series($lo, $hi) i;
SELECT forst.checkpoint();
});
}
$node->safe_psql('postgres', 'INSERT INTO gh SELECT * FROM g');
settle('g');
my $range = q{SELECT count(*), sum(k), md5(string_agg(k || ':' || a || ':' || v, ',' ORDER BY k))
  FROM %s WHERE a BETWEEN 1000 AND 4499};
my $noseq = 'SET enable_seqscan = off; SET enable_bitmapscan = off; ';
like($node->safe_psql('postgres', $noseq . 'EXPLAIN (COSTS OFF) ' . sprintf($range, 'g')),
	qr/Index Scan using g_a on g/, 'the range is an index scan of the secondary index');
my %range_misses;
$range_misses{$_} = fresh_read($noseq . 'SET forst.batch_lookup_rows = 512; ',
	$_, $range, 'g', 'gh', 'a range of 3,500 entries, read ahead') for ('off', 'on');
cmp_ok($range_misses{off}, '>=', 300,
	"a range's rows, not read ahead: lookups miss one by one ($range_misses{off})");
cmp_ok($range_misses{on} * 5, '<', $range_misses{off},
	"a range's rows, read ahead: the lookups' reads hit the disk cache ($range_misses{on} misses)");
# backward, and a LIMIT that stops early: the same rows as heap's
for my $q ('SELECT string_agg(k::text, \',\' ORDER BY a DESC) FROM (SELECT k, a FROM %s WHERE a BETWEEN 100 AND 2100 ORDER BY a DESC) s',
	'SELECT string_agg(k::text, \',\') FROM (SELECT k FROM %s WHERE a >= 40000 ORDER BY a LIMIT 37) s')
{
	fresh();
	is($node->safe_psql('postgres', $noseq . sprintf($q, 'g')),
		$node->safe_psql('postgres', sprintf($q, 'gh')),
		'read ahead, ' . ($q =~ /DESC/ ? 'backward' : 'with a LIMIT') . ': the heap twin\'s rows');
}

# EXPLAIN: the node over the input, with what it did
$node->safe_psql('postgres', 'SELECT forst.checkpoint()');
settle();
fresh();
my $explain = $node->safe_psql('postgres',
	'SET forst.batch_lookup_rows = 1024; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) '
	  . sprintf($upsert, 'f', 0));
like($explain, qr/Custom Scan \(ForstBatchLookup\)/, 'EXPLAIN shows the batching node');
like($explain, qr/Keys: 3500/, 'every input row\'s key was planned');
like($explain, qr/Batches: 4\b/, 'in batches of forst.batch_lookup_rows (1024)');
like($explain, qr/Blocks Over Budget: 0\b/, 'every planned block fit in the budget (an eighth of the cache)');
my ($planned) = $explain =~ /Blocks Planned: (\d+)/;
cmp_ok($planned // 0, '>', 100, "blocks planned and fetched together (" . ($planned // 'none') . ")");
$node->safe_psql('postgres', sprintf($upsert, 'h', 0));
unlike($node->safe_psql('postgres',
		q{EXPLAIN (COSTS OFF) INSERT INTO f VALUES (1, 'x') ON CONFLICT (k) DO UPDATE SET n = f.n + 1}),
	qr/ForstBatchLookup/, 'not planned for a single row');
unlike($node->safe_psql('postgres',
		'SET forst.batch_lookups = off; EXPLAIN (COSTS OFF) ' . sprintf($upsert, 'f', 0)),
	qr/ForstBatchLookup/, 'not planned with forst.batch_lookups off');
unlike($node->safe_psql('postgres',
		q{EXPLAIN (COSTS OFF) INSERT INTO f SELECT i, random()::text FROM generate_series(1, 10) i ON CONFLICT (k) DO NOTHING}),
	qr/ForstBatchLookup/, 'not planned when the input calls a volatile function');
like($node->safe_psql('postgres',
		q{EXPLAIN (COSTS OFF) WITH w AS (INSERT INTO f SELECT i, 'x' FROM generate_series(1, 10) i ON CONFLICT (k) DO NOTHING RETURNING k) SELECT count(*) FROM w}),
	qr/ForstBatchLookup/, 'planned for an upsert in a data-modifying WITH under a SELECT');
like($node->safe_psql('postgres',
		q{EXPLAIN (COSTS OFF) INSERT INTO f SELECT i, 'x' FROM generate_series(1, 10) i ON CONFLICT (k) DO NOTHING}),
	qr/ForstBatchLookup/, 'planned for DO NOTHING');

# concurrent writers against the heap twin; run again below with a disk
# cache too small for a batch
sub concurrent
{
	my ($what, $tx) = @_;
	my $total = 4 * $tx;
$node->safe_psql('postgres', 'SELECT forst.stats_reset()');
$node->pgbench(
	# a transaction touches f's keys out of order (a range, then one key),
	# so two of them can deadlock, on heap as well: retried
	"--no-vacuum --client=4 --jobs=4 --transactions=$tx --random-seed=7 --max-tries=20",
	0,
	[qr{processed: $total/$total}],
	[qr{^(pgbench: setting random seed to 7\n)?$}],
	"concurrent batch upserts, single-row upserts and deletes, and moves in g ($what)",
	{
		"050_batch_$what" =~ s/\W+/_/gr => q{
\set lo random(1, 50000)
\set step random(1, 7)
\set on random(0, 1)
\set one random(1, 56000)
\set gk random(1, 48000)
\set ga random(500, 47000)
BEGIN;
\if :on
SET LOCAL forst.batch_lookups = on;
\else
SET LOCAL forst.batch_lookups = off;
\endif
INSERT INTO f AS t (k, v, n) SELECT i, 'c ' || i, 1 FROM generate_series(:lo, :lo + 2000, :step) i
  ON CONFLICT (k) DO UPDATE SET n = t.n + excluded.n;
INSERT INTO h AS t (k, v, n) SELECT i, 'c ' || i, 1 FROM generate_series(:lo, :lo + 2000, :step) i
  ON CONFLICT (k) DO UPDATE SET n = t.n + excluded.n;
DELETE FROM f WHERE k = :one;
DELETE FROM h WHERE k = :one;
INSERT INTO f AS t VALUES (:one + 1, 'single', 5) ON CONFLICT (k) DO UPDATE SET n = t.n + 5;
INSERT INTO h AS t VALUES (:one + 1, 'single', 5) ON CONFLICT (k) DO UPDATE SET n = t.n + 5;
SET LOCAL enable_seqscan = off;
SELECT 1 / (SELECT CASE WHEN
  (SELECT string_agg(k || ':' || n, ',' ORDER BY k) FROM f WHERE k = ANY(ARRAY(SELECT generate_series(:one, :one + 3000, 11))))
  IS NOT DISTINCT FROM
  (SELECT string_agg(k || ':' || n, ',' ORDER BY k) FROM h WHERE k = ANY(ARRAY(SELECT generate_series(:one, :one + 3000, 11))))
  THEN 1 ELSE 0 END) AS "k = ANY answers as the heap twin";
UPDATE g SET a = :ga WHERE k = :gk;
UPDATE gh SET a = :ga WHERE k = :gk;
SET LOCAL enable_bitmapscan = off;
SELECT 1 / (SELECT CASE WHEN
  (SELECT string_agg(k || ':' || a, ',' ORDER BY a, k) FROM g WHERE a BETWEEN :ga - 500 AND :ga + 500)
  IS NOT DISTINCT FROM
  (SELECT string_agg(k || ':' || a, ',' ORDER BY a, k) FROM gh WHERE a BETWEEN :ga - 500 AND :ga + 500)
  THEN 1 ELSE 0 END) AS "a range of g's index answers as the heap twin";
COMMIT;
}
	});
is($node->safe_psql('postgres', sprintf($digest, 'f')),
	$node->safe_psql('postgres', sprintf($digest, 'h')),
	"after concurrent writers ($what), f equals its heap twin");
is($node->safe_psql('postgres', q{SELECT count(*) FROM f WHERE k NOT IN (SELECT k FROM h)}),
	'0', "no row of f is missing from h ($what)");
my $gall = q{SELECT md5(string_agg(k || ':' || a, ',' ORDER BY a, k)) FROM %s WHERE a >= 0};
is($node->safe_psql('postgres', 'SET enable_seqscan = off; SET enable_bitmapscan = off; ' . sprintf($gall, 'g')),
	$node->safe_psql('postgres', sprintf($gall, 'gh')),
	"after concurrent writers ($what), g's index, read ahead, gives gh's rows");
}
concurrent('the batches in the disk cache', 60);

# --- a disk cache too small for a batch: the batch's blocks are held in
# memory (forst.batch_lookup_memory, read/stage.h), fetched by coalesced
# ranged GETs, and the lookups read them there
$node->append_conf('postgresql.conf', "forst.cache_size = '1MB'\n");
$node->safe_psql('postgres', 'SELECT forst.checkpoint()');
settle();
my %gets;
for my $mode ('off', 'on')
{
	$round++;
	fresh();
	$node->safe_psql('postgres', "SET forst.batch_lookups = $mode; " . sprintf($upsert, 'f', $round));
	$gets{$mode} = $node->safe_psql('postgres', 'SELECT store_get_range FROM forst.stats');
	$node->safe_psql('postgres', sprintf($upsert, 'h', $round));
	is($node->safe_psql('postgres', sprintf($digest, 'f')),
		$node->safe_psql('postgres', sprintf($digest, 'h')),
		"a 1 MB disk cache, batching $mode: f equals its heap twin");
	$node->safe_psql('postgres', 'SELECT forst.checkpoint()');
}
note("a 1 MB disk cache: $gets{off} ranged GETs unbatched, $gets{on} batched");
cmp_ok($gets{on} * 3, '<', $gets{off},
	"held in memory, a batch's blocks take a fraction of the GETs ($gets{on} against $gets{off})");
fresh();
$explain = $node->safe_psql('postgres',
	'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' . sprintf($upsert, 'f', 0));
$node->safe_psql('postgres', sprintf($upsert, 'h', 0));
my ($held) = $explain =~ /Batches Held in Memory: (\d+)/;
my ($batches) = $explain =~ /Batches: (\d+)/;
my ($reqs) = $explain =~ /Requests for Them: (\d+)/;
my ($mem_reads) = $explain =~ /Reads from Memory: (\d+)/;
($planned) = $explain =~ /Blocks Planned: (\d+)/;
cmp_ok($batches // 0, '>=', 1, 'EXPLAIN: the upsert ran in batches (' . ($batches // 'none') . ')');
is($held, $batches, 'EXPLAIN: every batch was held in memory');
cmp_ok($reqs // 1e9, '<', ($planned // 0) / 2,
	'fetched by fewer requests than blocks: neighbours coalesced (' . ($reqs // 'none') . ' for ' . ($planned // 'none') . ' blocks)');
cmp_ok($mem_reads // 0, '>=', ($planned // 1e9) * 0.9,
	'the lookups read their blocks from memory (' . ($mem_reads // 'none') . ' reads)');
$node->safe_psql('postgres', 'SET forst.batch_lookup_memory = 0; ' . sprintf($upsert, 'f', 0));
$node->safe_psql('postgres', sprintf($upsert, 'h', 0));
concurrent('a 1 MB disk cache, batches held in memory', 20);

$node->stop;
done_testing();
