# Secondary index entries expire with their rows: an entry carries its
# row's TTL value, so that reads skip it once the row is expired and
# compaction reclaims it as it reclaims the row.  Without that, every
# entry of an expired row would stay in the table for good, and no SST
# file holding entries could ever be dropped whole.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('index_expiry');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
forst.memtable_size = '1MB'
forst.memtable_memory = '4MB'
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
SET TimeZone = 'UTC';
CREATE TABLE win (ws timestamptz, k int, n bigint, pad text, PRIMARY KEY (ws, k)) USING forst;
CREATE INDEX win_n ON win (n);
CREATE TABLE ev (id bigint PRIMARY KEY, at timestamptz, u bigint UNIQUE, pad text) USING forst;
SELECT forst.set_ttl('win', 'ws', NULL);
SELECT forst.set_ttl('ev', 'at', NULL);
});

# windows of one minute from 2024-01-01 00:00 UTC, 1000 rows each; n and u
# are unique across all windows
sub write_windows
{
	my ($from, $to) = @_;
	for my $m ($from .. $to)
	{
		$node->safe_psql('postgres', qq{
INSERT INTO win SELECT '2024-01-01 00:00+00'::timestamptz + $m * interval '1 minute', g, $m * 1000 + g, repeat('x', 200)
  FROM generate_series(1, 1000) g;
INSERT INTO ev SELECT $m * 1000 + g, '2024-01-01 00:00+00'::timestamptz + $m * interval '1 minute', $m * 1000 + g, repeat('y', 200)
  FROM generate_series(1, 1000) g;
});
	}
}

# What the indexes find (index scans forced) against what the tables hold.
sub through_indexes
{
	return $node->safe_psql('postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT (SELECT count(*) FROM win WHERE n BETWEEN 0 AND 1000000) || '|' ||
       (SELECT count(*) FROM ev WHERE u BETWEEN 0 AND 1000000);
});
}

sub counts
{
	return $node->safe_psql('postgres',
		'SET enable_indexscan = off; SELECT (SELECT count(*) FROM win) || \'|\' || (SELECT count(*) FROM ev)');
}

sub expiry_of
{
	my ($t) = @_;
	return $node->safe_psql('postgres', qq{
SELECT expired_files_dropped || '|' || expired_rows_reclaimed || '|' || expired_bytes_reclaimed
  FROM forst.tables WHERE "table" = '$t'::regclass});
}

write_windows(0, 19);
is(counts(), '20000|20000', 'all windows visible');
is(through_indexes(), '20000|20000', 'the indexes find every row');
ok($node->safe_psql('postgres', q{SELECT sum(sst_files) FROM forst.tables}) > 0,
	'memtables were flushed');

$node->safe_psql('postgres', q{
SELECT forst.advance_watermark('win', '2024-01-01 00:10+00');
SELECT forst.advance_watermark('ev', '2024-01-01 00:10+00');
});
is(counts(), '10000|10000', 'rows below the watermark are invisible');
is(through_indexes(), '10000|10000', '... and their entries too');
# an expired row's unique value is free
$node->safe_psql('postgres',
	q{INSERT INTO ev VALUES (900001, '2024-01-02 00:00+00', 5, 'reuses an expired value')});
is($node->safe_psql('postgres', 'SELECT id FROM ev WHERE u = 5'), '900001',
	'the unique value of an expired row is taken by a new row');

# a watermark past everything: files of win (key TTL column) that hold
# only expired rows and entries are dropped whole, at any level
$node->safe_psql('postgres', q{
SELECT forst.advance_watermark('win', '2024-01-01 00:30+00');
SELECT forst.advance_watermark('ev', '2024-01-01 00:30+00');
});
write_windows(30, 39);
ok($node->poll_query_until('postgres', q{
SELECT expired_files_dropped > 0 FROM forst.tables WHERE "table" = 'win'::regclass}),
	'wholly expired SST files of win, entries included, were dropped: ' . expiry_of('win'));
ok($node->poll_query_until('postgres', q{
SELECT expired_rows_reclaimed > 0 FROM forst.tables WHERE "table" = 'ev'::regclass}),
	'compaction reclaimed expired rows and entries of ev: ' . expiry_of('ev'));
is(counts(), '10000|10001', 'windows 30..39 visible (and the row that reused a value)');
is(through_indexes(), '10000|10001', 'the indexes agree');

# entries left in the table: those of live rows, and at most what
# compaction has not reached yet; with entries that never expire, the
# 30,000 of expired rows would all still be there
ok($node->poll_query_until('postgres', q{
SELECT coalesce(sum(entries), 0) < 30000 FROM forst.files WHERE "table" = 'win'::regclass}),
	"win's SST files come down to the live rows and entries and little more (40,000 if entries never expired): "
	  . $node->safe_psql('postgres', q{SELECT coalesce(sum(entries), 0) FROM forst.files WHERE "table" = 'win'::regclass}));

# a TTL change alone rewrites the entry with the row's new value
$node->safe_psql('postgres', q{
UPDATE ev SET at = '2024-01-03 00:00+00' WHERE id BETWEEN 30001 AND 30010;
SELECT forst.advance_watermark('ev', '2024-01-02 00:00+00');
});
is($node->safe_psql('postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM ev WHERE u BETWEEN 0 AND 1000000}), '11',
	'rows whose TTL value moved past the watermark (and the one at it) are found through the index');

$node->stop;
done_testing();
