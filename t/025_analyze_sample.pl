# ANALYZE samples a forst table at a cost set by its statistics target,
# not by the table's size (src/am/tableam/analyze.c): the pseudo-blocks
# ANALYZE picks stand for data blocks of the largest level, and each yields
# the rows of its block's key range, merged from every level.  Before, the
# first pseudo-block yielded every row of the table: ANALYZE read all of
# it, as a full scan.
#
# Checked, with dozens of files below level 0 and the statistics target at
# its minimum (300 rows): ANALYZE looks up fewer than half the blocks a full
# scan does; the row count it stores is within 10% of the truth, also after
# half the rows are deleted (their tombstones in newer files than the rows)
# with new keys not compacted yet and first thing after a restart (the
# table not read yet); the sample
# spans the key range and finds every value of a 7-valued column; a table
# whose rows are all in memtables is still counted exactly.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('analyze');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
forst.memtable_size = '1MB'
forst.memtable_memory = '4MB'
forst.target_file_size = '256kB'
autovacuum = off
});
$node->start;

my $rows = 200000;
$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE a (k int PRIMARY KEY, g int NOT NULL, v text) USING forst;
ALTER TABLE a ALTER COLUMN k SET STATISTICS 1;
ALTER TABLE a ALTER COLUMN g SET STATISTICS 1;
ALTER TABLE a ALTER COLUMN v SET STATISTICS 1;
});
for my $r (0 .. 3)
{
	my $lo = $r * $rows / 4 + 1;
	my $hi = ($r + 1) * $rows / 4;
	$node->safe_psql('postgres', qq{
INSERT INTO a SELECT i, i % 7, md5(i::text) || md5((i + 1)::text) FROM generate_series($lo, $hi) i;
});
}
$node->safe_psql('postgres', 'SELECT forst.checkpoint()');

# compactions settle (the file counts stay the same for 2 s)
sub settle
{
	my $prev = '';
	for (1 .. 90)
	{
		my $n = $node->safe_psql('postgres',
			q{SELECT string_agg(level || ':' || n, ',' ORDER BY level) FROM (SELECT level, count(*) n FROM forst.table_files('a') GROUP BY level) x});
		return $n if $n eq $prev;
		$prev = $n;
		sleep 2;
	}
	return $prev;
}
my $files = settle();
note "files per level: $files";
my $deep = 0;
while ($files =~ /(\d+):(\d+)/g)
{
	$deep += $2 if $1 > 0;
}
cmp_ok($deep, '>=', 10, "$deep files below level 0");

my $lookups = q{SELECT block_cache_hits + block_cache_misses FROM forst.stats};

# block lookups of a statement, run alone
sub blocks_of
{
	my ($sql) = @_;
	my $before = $node->safe_psql('postgres', $lookups);
	$node->safe_psql('postgres', $sql);
	return $node->safe_psql('postgres', $lookups) - $before;
}

sub reltuples
{
	return $node->safe_psql('postgres',
		q{SELECT reltuples FROM pg_class WHERE relname = 'a'});
}

my $full = blocks_of('SELECT count(*) FROM a');
my $analyze = blocks_of('ANALYZE a');
note "block lookups: full scan $full, ANALYZE $analyze";
cmp_ok($full, '>', 500, "a full scan looks up $full blocks");
cmp_ok($analyze, '<', $full / 2,
	"ANALYZE looks up fewer than half as many ($analyze)");

my $est = reltuples();
cmp_ok(abs($est - $rows), '<', $rows / 10,
	"ANALYZE estimates $est rows of $rows");

# the sample spans the table: every g, keys from both ends
is( $node->safe_psql('postgres',
		q{SELECT n_distinct FROM pg_stats WHERE tablename = 'a' AND attname = 'g'}),
	'7', 'every value of g is in the sample');
is( $node->safe_psql('postgres',
		q{SELECT n_distinct FROM pg_stats WHERE tablename = 'a' AND attname = 'k'}),
	'-1', 'k is unique in the sample');
my ($lo, $hi) = split /\|/, $node->safe_psql('postgres',
	q{SELECT (histogram_bounds::text::int[])[1], (histogram_bounds::text::int[])[array_length(histogram_bounds, 1)] FROM pg_stats WHERE tablename = 'a' AND attname = 'k'});
cmp_ok($lo, '<', $rows / 10, "k's histogram starts low ($lo)");
cmp_ok($hi, '>', $rows * 9 / 10, "k's histogram ends high ($hi)");

# deleted rows: their tombstones are newer than the rows, in other files
$node->safe_psql('postgres', 'DELETE FROM a WHERE k % 2 = 0');
$node->safe_psql('postgres', 'SELECT forst.checkpoint()');
settle();
$node->safe_psql('postgres', 'ANALYZE a');
$est = reltuples();
cmp_ok(abs($est - $rows / 2), '<', $rows / 20,
	"after deleting half, ANALYZE estimates $est rows of " . $rows / 2);

# new keys not compacted yet (memtables, level 0): each key group's new
# keys sort after its old ones, so they crowd into the 128 cells at the key
# groups' ends.  A sample of 300 cells catches few of those and varies
# much: from here on ANALYZE samples 3,000 pseudo-blocks (statistics target
# 10), which checks that the cells leave none of the new rows out and
# count none twice.
$node->safe_psql('postgres', 'ALTER TABLE a ALTER COLUMN k SET STATISTICS 10');
my $more = $rows / 5;
$node->safe_psql('postgres', sprintf(q{
INSERT INTO a SELECT i, i %% 7, md5(i::text) FROM generate_series(%d, %d) i;
}, $rows + 1, $rows + $more));
$node->safe_psql('postgres', 'ANALYZE a');
my $live = $rows / 2 + $more;
$est = reltuples();
cmp_ok(abs($est - $live), '<', $live / 10,
	"with new rows not compacted, ANALYZE estimates $est rows of $live");

# first thing after a restart, before anything read the table
$node->restart;
$node->safe_psql('postgres', 'ANALYZE a');
$est = reltuples();
cmp_ok(abs($est - $live), '<', $live / 10,
	"after a restart, ANALYZE estimates $est rows of $live");

# rows only in memtables: read whole, counted exactly
$node->safe_psql('postgres', q{
CREATE TABLE m (k int PRIMARY KEY, v int) USING forst;
INSERT INTO m SELECT i, i FROM generate_series(1, 1234) i;
ANALYZE m;
});
is($node->safe_psql('postgres',
		q{SELECT reltuples FROM pg_class WHERE relname = 'm'}),
	'1234', 'a table in memtables is counted exactly');

is($node->safe_psql('postgres', 'SELECT count(*) FROM a'), $live,
	'the table is intact');
$node->stop;
done_testing();
