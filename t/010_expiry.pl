# Expiry of windowed state through flushes, compaction, a restart and a
# crash: rows below the watermark are invisible at once, compaction drops
# wholly expired SST files without reading them (key TTL column) and
# expired rows when it merges (non-key TTL column), forst.tables counts
# what expiry reclaimed, and the settings survive restarts (the flush
# worker gets them again from the first backend that uses the table).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('expiry');
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
CREATE TABLE ev (id bigint PRIMARY KEY, at timestamptz, pad text) USING forst;
SELECT forst.set_ttl('win', 'ws', NULL);
SELECT forst.set_ttl('ev', 'at', NULL);
});

# windows of one minute from 2024-01-01 00:00 UTC, 1000 rows each
sub write_windows
{
	my ($from, $to) = @_;
	for my $m ($from .. $to)
	{
		$node->safe_psql('postgres', qq{
INSERT INTO win SELECT '2024-01-01 00:00+00'::timestamptz + $m * interval '1 minute', g, g, repeat('x', 200)
  FROM generate_series(1, 1000) g;
INSERT INTO ev SELECT $m * 1000 + g, '2024-01-01 00:00+00'::timestamptz + $m * interval '1 minute', repeat('y', 200)
  FROM generate_series(1, 1000) g;
});
	}
}

sub counts
{
	return $node->safe_psql('postgres',
		'SELECT (SELECT count(*) FROM win) || \'|\' || (SELECT count(*) FROM ev)');
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
ok($node->safe_psql('postgres', q{SELECT sum(sst_files) FROM forst.tables}) > 0,
	'memtables were flushed');

$node->safe_psql('postgres', q{
SELECT forst.advance_watermark('win', '2024-01-01 00:10+00');
SELECT forst.advance_watermark('ev', '2024-01-01 00:10+00');
});
is(counts(), '10000|10000', 'rows below the watermark are invisible at once');

# more windows: flushes run compactions, whose merges drop expired rows
write_windows(20, 29);
is(counts(), '20000|20000', 'windows 10..29 visible');
for my $t ('win', 'ev')
{
	ok($node->poll_query_until('postgres', qq{
SELECT expired_rows_reclaimed > 0 AND expired_bytes_reclaimed > 0
  FROM forst.tables WHERE "table" = '$t'::regclass}),
		"compaction removed expired rows of $t: " . expiry_of($t));
}

# a watermark past every window written: the next compaction drops the
# old files whole (any level for the key TTL column of win, the deepest
# level for the non-key one of ev)
$node->safe_psql('postgres', q{
SELECT forst.advance_watermark('win', '2024-01-01 00:30+00');
SELECT forst.advance_watermark('ev', '2024-01-01 00:30+00');
});
is(counts(), '0|0', 'everything written so far expired');
write_windows(30, 39);
for my $t ('win', 'ev')
{
	ok($node->poll_query_until('postgres', qq{
SELECT expired_files_dropped > 0 FROM forst.tables WHERE "table" = '$t'::regclass}),
		"wholly expired SST files of $t were dropped unread: " . expiry_of($t));
}
is(counts(), '10000|10000', 'nothing visible changed by compaction');

# ON CONFLICT over an expired key (compacted away or not) inserts
is($node->safe_psql('postgres', q{
INSERT INTO ev VALUES (5, '2024-01-02 00:00+00', 'new'), (35005, '2024-01-02 00:00+00', 'new')
  ON CONFLICT (id) DO UPDATE SET pad = 'updated' RETURNING id, pad}),
	"5|new\n35005|updated", 'ON CONFLICT inserts over an expired key, updates a live one');

$node->restart;
is(counts(), '10000|10001', 'the same after a restart');
is($node->safe_psql('postgres', q{
SET TimeZone = 'UTC';
SELECT ttl_column || '|' || watermark FROM forst.tables WHERE "table" = 'win'::regclass}),
	'ws|2024-01-01 00:30:00+00', 'the watermark survives a restart');

# after the restart the worker learns the settings again from the writers
$node->safe_psql('postgres', q{
SELECT forst.advance_watermark('win', '2024-01-01 00:40+00');
});
is(counts(), '0|10001', 'rows below the new watermark are invisible');
write_windows(40, 49);
ok($node->poll_query_until('postgres', q{
SELECT expired_files_dropped > 0 FROM forst.tables WHERE "table" = 'win'::regclass}),
	'expired files dropped after the restart: ' . expiry_of('win'));
is(counts(), '10000|20001', 'windows 40..49 visible');

# a crash: the settings are in a WAL-logged catalog table
$node->safe_psql('postgres', q{
SELECT forst.advance_watermark('win', '2024-01-01 00:45+00');
});
$node->stop('immediate');
$node->start;
is(counts(), '5000|20001', 'the watermark survives a crash');

$node->stop;
done_testing();
