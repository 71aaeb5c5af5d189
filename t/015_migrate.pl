# ALTER TABLE ... SET ACCESS METHOD between heap and forst
# (src/am/ddl/migrate.c) and durability: a table migrated to forst, with
# memtables small enough that its rows go to SST files, keeps every row
# through a clean restart, a crash (immediate stop) and on a streaming
# standby; migrated back to heap, it keeps them too and forst forgets it;
# an ALTER rolled back leaves no forst state, also after a crash.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# one object store for both servers: the standby reads the primary's SST
# files (t/008)
my $store = PostgreSQL::Test::Utils::tempdir('store');
my $node = PostgreSQL::Test::Cluster->new('migrate');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
forst.remote_dir = 'file://$store'
forst.memtable_size = '1MB'
forst.memtable_memory = '4MB'
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE big (k bigint, w int, v text NOT NULL, ts timestamptz DEFAULT now(),
                  PRIMARY KEY (k, w));
INSERT INTO big SELECT g, g % 7, repeat(md5(g::text), 1 + g % 5), '2024-01-01'::timestamptz + g * interval '1 s'
  FROM generate_series(1, 40000) g;
CREATE TABLE small (id int PRIMARY KEY, note text);
INSERT INTO small SELECT g, 'n' || g FROM generate_series(1, 500) g;
});

$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;

my $sum_sql = q{SELECT count(*) || ':' || md5(string_agg(big::text, ',' ORDER BY k, w)) FROM big};
my $sum = $node->safe_psql('postgres', $sum_sql);
like($sum, qr/^40000:/, 'heap table has 40,000 rows');

sub am_of
{
	my ($n, $rel) = @_;
	return $n->safe_psql('postgres',
		"SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = '$rel'");
}

# --- heap -> forst --------------------------------------------------------
$node->safe_psql('postgres', 'ALTER TABLE big SET ACCESS METHOD forst');
is(am_of($node, 'big') . ' ' . am_of($node, 'big_pkey'), 'forst forst_key', 'big is a forst table');
is($node->safe_psql('postgres', $sum_sql), $sum, 'every row after the migration');

# the migrated rows are flushed to SST files like any others
$node->poll_query_until('postgres',
	q{SELECT sst_files > 0 FROM forst.tables WHERE "table" = 'big'::regclass})
  or die 'no SST files for the migrated table';
ok(1, 'the migrated rows were flushed to SST files');
is($node->safe_psql('postgres', $sum_sql), $sum, 'every row read through SST files');

$node->wait_for_catchup($standby);
is(am_of($standby, 'big'), 'forst', 'the standby sees a forst table');
is($standby->safe_psql('postgres', $sum_sql), $sum, 'the standby reads every row');

$node->restart;
is($node->safe_psql('postgres', $sum_sql), $sum, 'every row after a clean restart');

# writes after the migration, then a crash
$node->safe_psql('postgres', q{
INSERT INTO big VALUES (1, 1, 'upserted') ON CONFLICT (k, w) DO UPDATE SET v = 'upserted';
UPDATE big SET v = v || '+' WHERE k % 1000 = 0;
DELETE FROM big WHERE k BETWEEN 100 AND 199;
INSERT INTO big SELECT 100000 + g, 0, 'new' FROM generate_series(1, 50) g;
});
my $sum2 = $node->safe_psql('postgres', $sum_sql);
like($sum2, qr/^39950:/, 'DML on the migrated table');
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', $sum_sql), $sum2, 'every row after a crash');
is($node->safe_psql('postgres', q{SET enable_seqscan = off; SELECT v FROM big WHERE k = 1 AND w = 1}),
	'upserted', 'key lookup after the crash');

# --- a migration rolled back, then a crash --------------------------------
is($node->safe_psql('postgres', 'SELECT tables FROM forst.memory()'), '1',
	'forst has state for one table');
$node->safe_psql('postgres', q{
BEGIN;
ALTER TABLE small SET ACCESS METHOD forst;
INSERT INTO small VALUES (501, 'rolled back');
ROLLBACK;
});
# a commit flushes the WAL with the abort (and forst's DROP record after it);
# an abort whose record never reached the disk is an orphan until the next
# restart that replays from a later checkpoint, as for CREATE TABLE
$node->safe_psql('postgres', 'CREATE TABLE flush_marker ()');
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', 'SELECT tables FROM forst.memory()'),
	'1', 'a rolled-back migration leaves no forst state in shared memory (only big has some)');
is($node->safe_psql('postgres', "SELECT count(*) || ':' || max(id) FROM small"), '500:500',
	'the heap table is intact');
is(am_of($node, 'small') . ' ' . am_of($node, 'small_pkey'), 'heap btree', 'still heap with a btree key');

# --- forst -> heap ---------------------------------------------------------
my $node_oid = $node->safe_psql('postgres', "SELECT 'big'::regclass::oid");
$node->safe_psql('postgres', 'ALTER TABLE big SET ACCESS METHOD heap');
is(am_of($node, 'big') . ' ' . am_of($node, 'big_pkey'), 'heap btree', 'big is a heap table again');
is($node->safe_psql('postgres', "SELECT 'big'::regclass::oid"), $node_oid, 'with the same OID');
is($node->safe_psql('postgres', $sum_sql), $sum2, 'every row on heap');
is($node->safe_psql('postgres', 'SELECT tables FROM forst.memory()'),
	'0', 'forst forgot the table');
$node->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $sum_sql), $sum2, 'the standby reads every row on heap');
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', $sum_sql), $sum2, 'every row on heap after a crash');
is($node->safe_psql('postgres', 'SELECT tables FROM forst.memory()'),
	'0', 'and forst state did not come back');

# a database without the extension: SET ACCESS METHOD is PostgreSQL's alone
$node->safe_psql('postgres', 'CREATE DATABASE noext');
is($node->safe_psql('noext', q{
CREATE TABLE a (k int PRIMARY KEY);
CREATE ACCESS METHOD heap2 TYPE TABLE HANDLER heap_tableam_handler;
ALTER TABLE a SET ACCESS METHOD heap2;
SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = 'a'}),
	'heap2', 'SET ACCESS METHOD in a database without forst');

$standby->stop;
$node->stop;
done_testing();
