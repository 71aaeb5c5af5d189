# The WAL catch-up after a start must not rebuild dropped tables.
#
# forst's slot stays behind while some table keeps rows in an active
# memtable, so the catch-up replays everything logged since, and rows that
# are in SST files are skipped.  A table dropped since (DROP TABLE, DROP
# DATABASE), whose objects garbage collection deleted, has no SST files:
# its rows used to go back into memtables until its DROP record came, and
# when they were more than the memtable pool holds, the catch-up waited
# for memory for ever (the flush worker does nothing before it ends),
# holding forst_wal's lock without taking cancels.  And a DROP DATABASE
# run before the catch-up (the first statement after a start) logged no
# forst record: the catch-up then brought its tables back for good, which
# kept the slot behind and had the checkpointer start workers for a
# database that does not exist.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('catchup_dropped');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
max_wal_size = 4GB
forst.gc_grace = 0
forst.checkpoint_interval = 0
});
$node->start;
my $slot = q{SELECT restart_lsn FROM pg_replication_slots WHERE slot_name = 'forst'};
$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE keep (k int PRIMARY KEY) USING forst;
INSERT INTO keep VALUES (1);
CREATE TABLE big (k int PRIMARY KEY, v text) USING forst;
});
my $after_keep = $node->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');

# More rows than the pool (128 MB) holds, in batches so that the flush
# keeps up and nobody waits for memory (which would freeze keep's memtable
# and move the slot past it).
for my $i (0 .. 11)
{
	$node->safe_psql('postgres', sprintf(
		"INSERT INTO big SELECT g, repeat('x', 100) FROM generate_series(%d, %d) g",
		$i * 100000 + 1, ($i + 1) * 100000));
}
is($node->safe_psql('postgres', "SELECT ($slot) < '$after_keep'"), 't',
	'keep\'s row holds the slot back');
# wait for the flushes and compactions of big to end before dropping it
ok($node->poll_query_until('postgres',
	q{SELECT immutable = 0 AND retiring = 0 FROM forst.memory()}),
	'big\'s memtables are flushed');
sleep 2;
$node->safe_psql('postgres', 'DROP TABLE big');
ok($node->safe_psql('postgres', 'SELECT dead_tables FROM forst.gc()') >= 1,
	'garbage collection deleted the dropped table\'s objects');

$node->restart;
my ($timed_out, $out, $err) = (0, '', '');
$node->psql('postgres', 'SELECT count(*) FROM keep',
	stdout => \$out, stderr => \$err,
	timeout => 120, timed_out => \$timed_out);
ok(!$timed_out, 'the catch-up ends');
if ($timed_out)
{
	# the catch-up waits for ever, holding forst_wal's lock: stop here
	$node->stop('immediate');
	done_testing();
	exit;
}
is($out, '1', 'the table is read');
is($node->safe_psql('postgres', 'SELECT tables FROM forst.memory()'), '1',
	'the dropped table did not come back');

# DROP DATABASE as the first statement after a start (before the catch-up)
$node->safe_psql('postgres', 'CREATE DATABASE d2');
$node->safe_psql('d2', q{
CREATE EXTENSION forst;
CREATE TABLE t (k int PRIMARY KEY, v text) USING forst;
INSERT INTO t SELECT g, 'x' FROM generate_series(1, 20000) g;
});
$node->restart;
$node->safe_psql('postgres', 'DROP DATABASE d2');
is($node->safe_psql('postgres', 'SELECT count(*) FROM keep'), '1', 'keep is read');
is($node->safe_psql('postgres', 'SELECT tables FROM forst.memory()'), '1',
	'the dropped database\'s table did not come back');
# and not after the next start either
$node->restart;
is($node->safe_psql('postgres', 'SELECT count(*) FROM keep'), '1', 'keep is read');
is($node->safe_psql('postgres', 'SELECT tables FROM forst.memory()'), '1',
	'nor after another start');

$node->stop('immediate');
done_testing();
