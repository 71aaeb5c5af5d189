# A forst table written a little and then left alone must not keep WAL for
# ever: once forst's slot holds back more than a quarter of max_wal_size,
# the flush worker writes the idle table's active memtable to an SST file
# and the slot moves on.  The rows stay readable, also after a crash.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('idle');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
max_wal_size = 64MB
min_wal_size = 32MB
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE f (k int PRIMARY KEY, v text) USING forst;
INSERT INTO f SELECT g, 'v' || g FROM generate_series(1, 100) g;
CREATE TABLE h (k int, v text);
});
my $lag = q{SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)
  FROM pg_replication_slots WHERE slot_name = 'forst'};
my $sst = q{SELECT sst_files FROM forst.tables WHERE "table" = 'f'::regclass};
is($node->safe_psql('postgres', $sst), '0', 'the rows sit in the active memtable');

# ~50 MB of heap WAL, well over a quarter of max_wal_size (16 MB).  (The
# flush worker may already react while it is written, so what is checked
# is the WAL written, not the slot's lag at one moment.)
my $start = $node->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
$node->safe_psql('postgres',
	"INSERT INTO h SELECT g, repeat('w', 100) FROM generate_series(1, 300000) g");
ok($node->safe_psql('postgres', "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '$start')") > 16 * 1024 * 1024,
	'heap WAL piled up behind the slot');
ok($node->poll_query_until('postgres', "SELECT ($lag) < 16 * 1024 * 1024"),
	'the flush worker flushed the idle memtable and the slot moved on');
ok($node->safe_psql('postgres', $sst) > 0, 'the rows are in an SST file');

$node->safe_psql('postgres', 'CHECKPOINT');
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', q{SELECT count(*), sum(k), min(v) FROM f}),
	'100|5050|v1', 'the rows are intact after a crash');
$node->stop;
done_testing();
