# The differential test (sql/forst_differential.sql: random DML on a forst
# table and its heap twin, compared after every statement) on a server
# whose memtable pool is the smallest there is, two memtables: a statement
# that fills one waits for the flush worker, which then reuses the memory
# of rows the statement has read.  Before rows were read again after such a wait, an
# index scan handed the executor the row it had read ahead from reused
# memory (an UPDATE of two rows updated one, silently), and DELETE ...
# RETURNING failed with "failed to fetch deleted tuple".  A statement read
# a memtable whose pages the flush worker was giving back when the worker
# had decided to free it while the statement waited, and the statement had
# checked its view between that decision and the new generation.
use strict;
use warnings;

use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('pressure');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
wal_level = replica
max_wal_senders = 0
forst.memtable_size = '2MB'
forst.memtable_memory = '2MB'
log_min_messages = debug1
});
$node->append_conf('postgresql.conf', slurp_file($ENV{FORST_TAP_EXTRA_CONF}))
  if $ENV{FORST_TAP_EXTRA_CONF};
$node->start;

my $sqlfile = "$FindBin::Bin/../sql/forst_differential.sql";
$node->safe_psql('postgres', 'CREATE EXTENSION forst');
is($node->safe_psql('postgres', 'SELECT slabs FROM forst.memory()'), '2',
	'the memtable pool holds two memtables');
$node->safe_psql('postgres', 'DROP EXTENSION forst');

# The second pass widens the moment in which the flush worker gives a
# freed memtable's pages back (a developer option): a statement that waited
# for memory wakes while the worker frees a memtable of its view, and must
# see that view stale before it reads it.  When the decision to free was
# not fenced against the end of the wait, the statement read removed pages
# here every time ("malformed entry"); without the delay, now and then.
foreach my $pass ('plain', 'slow page release')
{
	if ($pass ne 'plain')
	{
		$node->append_conf('postgresql.conf',
			"forst.debug_slab_release_delay = '30ms'");
		$node->reload;
	}
	my $db = $pass eq 'plain' ? 'plain' : 'slow';
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	my $log_offset = -s $node->logfile;
	my ($ret, $out, $err) = $node->psql($db, slurp_file($sqlfile),
		extra_params => [ '-q' ]);
	is($ret, 0, "$pass: the differential run completes");
	unlike($err, qr/ERROR/, "$pass: forst and heap agree after every statement")
	  or diag($err);
	like($out, qr/^t\|t\|t$/m,
		"$pass: enough statements, failures, commits and rollbacks were compared")
	  or diag($out);
	ok($node->log_contains('moves to a new view|reads its current row again', $log_offset),
		"$pass: rows were read again after waits for memory (the case under test happened)");
	ok(!$node->log_contains('TRAP|terminated by signal', $log_offset), "$pass: no crash");
}

done_testing();
