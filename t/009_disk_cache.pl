# The local disk cache in a real server: state 10x forst.cache_size read
# correctly (compared with a heap twin) while the cache directory stays
# within its bound, sampled between statements; corrupted cache files are
# detected, re-fetched and replaced; a restart keeps the cache (hits right
# after it, in forst.stats).
use strict;
use warnings;

use File::Find;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $cache_kb = 2048;
# one unit: a 32 KiB chunk plus header and key, in 4 KiB blocks
my $unit = 40 * 1024;

my $node = PostgreSQL::Test::Cluster->new('cache');
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

$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE f (k int PRIMARY KEY, v text) USING forst;
CREATE TABLE h (k int PRIMARY KEY, v text);
});

# Bytes of the cache's files: as written (apparent) and as allocated (du).
# All names are listed first, then stat'ed: a walk that stat'ed as it went
# would count a file evicted behind it and its replacement ahead of it.
sub cache_usage
{
	my ($apparent, $allocated, $files) = (0, 0, 0);
	my @names;

	find({ wanted => sub { push @names, $File::Find::name }, no_chdir => 1 },
		$cache_dir);
	for my $name (@names)
	{
		my @st = lstat($name);
		next unless @st && -f _;
		$apparent += $st[7];
		$allocated += $st[12] * 512;
		$files++;
	}
	return ($apparent, $allocated, $files);
}

my $max_apparent = 0;
my $max_allocated = 0;
my $samples = 0;
my $over = 0;

sub sample
{
	my ($a, $b) = cache_usage();
	$max_apparent = $a if $a > $max_apparent;
	$max_allocated = $b if $b > $max_allocated;
	$over++ if $a > $cache_kb * 1024 || $b > $cache_kb * 1024 + $unit;
	$samples++;
}

# ~24 MB of incompressible rows (hex digests), in 24 statements per twin
for my $r (0 .. 23)
{
	my $lo = $r * 8000 + 1;
	my $hi = ($r + 1) * 8000;
	$node->safe_psql('postgres', qq{
INSERT INTO f SELECT g, md5(g::text) || md5((g + 1)::text) || md5((g + 2)::text) || md5((g + 3)::text)
  FROM generate_series($lo, $hi) g;
INSERT INTO h SELECT g, md5(g::text) || md5((g + 1)::text) || md5((g + 2)::text) || md5((g + 3)::text)
  FROM generate_series($lo, $hi) g;
});
	sample();
}

# wait for the flushes to leave SST files of ten times the cache
my $sst_bytes;
for (1 .. 120)
{
	$sst_bytes = $node->safe_psql('postgres', 'SELECT sst_bytes FROM forst.tables');
	last if $sst_bytes >= 10 * $cache_kb * 1024;
	sleep 1;
}
cmp_ok($sst_bytes, '>=', 10 * $cache_kb * 1024,
	"state in SST files is 10x the cache ($sst_bytes bytes)");

my $cmp = q{
SELECT (SELECT count(*) FROM f), (SELECT count(*) FROM h),
       (SELECT count(*) FROM (SELECT * FROM f EXCEPT SELECT * FROM h) d)
     + (SELECT count(*) FROM (SELECT * FROM h EXCEPT SELECT * FROM f) d)};
is($node->safe_psql('postgres', $cmp), '192000|192000|0',
	'full scans through a cache of a tenth of the state agree with the heap');
sample();

# point lookups, each backend with an empty block cache
my $bad = 0;
for my $i (1 .. 30)
{
	my $keys = join(',', map { ($i * 7919 + $_ * 104729) % 192000 + 1 } 1 .. 40);
	my $q = "SELECT string_agg(k || ':' || v, ',' ORDER BY k) FROM %s WHERE k IN ($keys)";
	my $got = $node->safe_psql('postgres',
		"SET enable_seqscan = off; " . sprintf($q, 'f'));
	my $want = $node->safe_psql('postgres', sprintf($q, 'h'));
	$bad++ if $got ne $want;
	sample();
}
is($bad, 0, 'point lookups agree with the heap');

ok($samples > 50, "directory sampled $samples times");
is($over, 0,
	"cache files never exceeded the bound (max $max_apparent bytes written, "
	  . "$max_allocated allocated, bound " . $cache_kb * 1024 . ")");
cmp_ok($max_apparent, '>', $cache_kb * 1024 / 2, 'the cache was used to at least half');
is($node->safe_psql('postgres', q{
SELECT cache_evictions > 0, cache_hits > 0, cache_misses > 0,
       cache_bytes_used <= cache_capacity, cache_capacity = 2048 * 1024,
       cache_bytes_admitted > 0, cache_corrupt_entries = 0, cache_ready
  FROM forst.stats}), 't|t|t|t|t|t|t|t', 'forst.stats: evictions, hits, misses, bound');
my ($app, $alloc) = cache_usage();
my $used = $node->safe_psql('postgres', 'SELECT cache_bytes_used FROM forst.stats');
cmp_ok($alloc, '<=', $used, "allocated bytes ($alloc) within the accounted ($used)");

# ---- restart with room for everything: the cache survives, then corruption
$node->append_conf('postgresql.conf', "forst.cache_size = '64MB'\n");
$node->restart;
my $entries = $node->safe_psql('postgres', q{
SELECT cache_entries FROM forst.stats WHERE cache_ready});
for (1 .. 30)
{
	last if $entries ne '';
	sleep 1;
	$entries = $node->safe_psql('postgres', q{
SELECT cache_entries FROM forst.stats WHERE cache_ready});
}
cmp_ok($entries, '>', 0, "after a restart the cache holds its entries ($entries)");
$node->safe_psql('postgres', 'SELECT forst.stats_reset()');
# what the small cache did not hold is cached on its second miss
is($node->safe_psql('postgres', $cmp), '192000|192000|0', 'scan after restart');
is($node->safe_psql('postgres', q{
SELECT cache_hits > 0, cache_not_admitted > 0 FROM forst.stats}), 't|t',
	'first scan: hits on what the cache kept, first misses not admitted');
is($node->safe_psql('postgres', $cmp), '192000|192000|0', 'second scan after restart');
$node->safe_psql('postgres', 'SELECT forst.stats_reset()');
is($node->safe_psql('postgres', $cmp), '192000|192000|0', 'third scan after restart');
is($node->safe_psql('postgres', q{
SELECT cache_hits > 0, cache_misses, store_get_range FROM forst.stats}), 't|0|0',
	'all reads of the third scan hit the disk cache, none went to the store');

$node->restart;
$node->poll_query_until('postgres', 'SELECT cache_ready FROM forst.stats')
  or die 'cache not ready after restart';
$node->safe_psql('postgres', 'SELECT forst.stats_reset()');
is($node->safe_psql('postgres', $cmp), '192000|192000|0', 'scan right after a restart');
is($node->safe_psql('postgres', q{
SELECT cache_hits > 0, cache_misses FROM forst.stats}), 't|0',
	'a restart keeps the cache: hits, no misses');

# flip one payload byte in every entry file
my @entries;
find(sub { push @entries, $File::Find::name if -f $_ && /^[0-9a-f]{16}\.[0-9a-f]+$/ },
	$cache_dir);
cmp_ok(scalar @entries, '>', 10, 'cache entry files to corrupt: ' . scalar @entries);
for my $path (@entries)
{
	open(my $fh, '+<', $path) or die "open $path: $!";
	binmode $fh;
	my $size = -s $fh;
	seek($fh, $size - 100, 0);
	read($fh, my $b, 1);
	seek($fh, $size - 100, 0);
	print $fh chr(ord($b) ^ 0x20);
	close $fh;
}
$node->safe_psql('postgres', 'SELECT forst.stats_reset()');
is($node->safe_psql('postgres', $cmp), '192000|192000|0',
	'scan over corrupted cache files returns the right rows');
my ($corrupt, $misses) = split /\|/, $node->safe_psql('postgres',
	'SELECT cache_corrupt_entries, cache_misses FROM forst.stats');
cmp_ok($corrupt, '>=', scalar(@entries) / 2, "corrupt entries detected ($corrupt)");
$node->safe_psql('postgres', 'SELECT forst.stats_reset()');
is($node->safe_psql('postgres', $cmp), '192000|192000|0', 'scan after the re-fetch');
is($node->safe_psql('postgres', q{
SELECT cache_hits > 0, cache_misses, cache_corrupt_entries FROM forst.stats}), 't|0|0',
	'corrupted entries were replaced by good ones');

$node->stop;
done_testing();
