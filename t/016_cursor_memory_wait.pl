# Statements that scan a forst table and write more than the memtable pool
# holds: the scan's cursor must see every row although the backend waits
# for memtable memory on the way, and the flush worker reuses the memtables
# of the cursor's view meanwhile (a waiting backend does not hold them,
# shmem/slab_pins.c).  Before cursors moved to a new view then, the UPDATE below
# updated 269,221 of 300,000 rows: the rest of the scan read reused memory.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('cursor');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
wal_level = replica
max_wal_senders = 0
forst.memtable_size = '1MB'
forst.memtable_memory = '8MB'
log_min_messages = debug1
});
$node->append_conf('postgresql.conf', slurp_file($ENV{FORST_TAP_EXTRA_CONF}))
  if $ENV{FORST_TAP_EXTRA_CONF};
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE u (k bigint PRIMARY KEY, v bigint NOT NULL, t text) USING forst;
INSERT INTO u SELECT g, 0, repeat('y', 50) FROM generate_series(1, 300000) g;
});

sub sql { return $node->safe_psql('postgres', $_[0]); }

my $log_offset = -s $node->logfile;
is(sql('WITH w AS (UPDATE u SET v = v + 1 RETURNING 1) SELECT count(*) FROM w'),
	'300000', 'UPDATE of every row (seq scan) updates every row');
is(sql('SELECT count(*) || \'/\' || sum(v) || \'/\' || min(v) FROM u'),
	'300000/300000/1', 'every row updated once');

is(sql('WITH w AS (DELETE FROM u WHERE k % 3 = 0 RETURNING 1) SELECT count(*) FROM w'),
	'100000', 'DELETE of a third of the rows deletes all of them');
is(sql('SELECT count(*) || \'/\' || count(*) FILTER (WHERE k % 3 = 0) FROM u'),
	'200000/0', 'no deleted row left');

sql('CREATE TABLE u2 (k bigint PRIMARY KEY, v bigint NOT NULL, t text) USING forst');
is(sql('WITH w AS (INSERT INTO u2 SELECT k, v + 1, t FROM u RETURNING 1) SELECT count(*) FROM w'),
	'200000', 'INSERT ... SELECT from a forst table copies every row');
is(sql('SELECT count(*) || \'/\' || sum(v) FROM u2'), '200000/400000', 'the copy is complete');

is(sql('SET enable_seqscan = off; WITH w AS (UPDATE u SET v = v + 1 WHERE k <= 200000 RETURNING 1) SELECT count(*) FROM w'),
	'133334', 'UPDATE through a key range scan updates every row in the range');
is(sql('SELECT sum(v) FROM u'), '333334', 'every row in the range updated once');

ok($node->log_contains('moves to a new view', $log_offset),
	'a cursor met a reused memtable (the case under test happened)');
ok(!$node->log_contains('TRAP|terminated by signal|malformed', $log_offset),
	'no crash, no malformed entry');

done_testing();
