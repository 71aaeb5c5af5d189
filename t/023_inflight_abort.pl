# A writer that fails between its PUT record and its memtable insert --
# here cancelled by statement_timeout while it waits for memtable memory --
# must not leave its in-flight mark behind (shmem/slab_pins.c).  The mark tells
# the flush worker that a record before it is not in a memtable yet, so a
# stale one held forst's replication slot at its LSN for as long as the
# backend lived without writing again.
#
# The file:// store is made read-only for a few seconds so that flushes
# fail and the memtable pool fills up.
use strict;
use warnings;

use File::Find;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('inflight');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'forst'
forst.memtable_size = '1MB'
forst.memtable_memory = '4MB'
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE f (k bigint PRIMARY KEY, t text) USING forst;
INSERT INTO f SELECT g, 'x' FROM generate_series(1, 10) g;
SELECT forst.checkpoint();
});
my $remote = $node->data_dir . '/forst/remote';

# every directory of the store read-only (or writable again)
sub store_mode
{
	my ($mode) = @_;
	find(sub { chmod($mode, $_) if -d $_ }, $remote);
}

# a session that stays open: its backend id stays taken, so no later
# writer with the same id resets a mark it left
my ($in, $out, $err) = ('', '', '');
my $writer = IPC::Run::start(
	[ 'psql', '-XAtq', '-d', $node->connstr('postgres') ],
	'<', \$in, '>', \$out, '2>', \$err,
	IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));

store_mode(0555);
$in .= "SET statement_timeout = '3s';\n"
  . "INSERT INTO f SELECT g, repeat('y', 300) FROM generate_series(100, 60099) g;\n"
  . "SELECT 'after';\n";
$writer->pump until $out =~ /after/ || $err =~ /FATAL/;
like($err, qr/canceling statement due to statement timeout/,
	'the writer waited for memtable memory and was cancelled');
cmp_ok($node->safe_psql('postgres', 'SELECT write_stalls FROM forst.stats'), '>', 0,
	'it had stalled on memtable memory');
my $after = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
store_mode(0755);

# flush everything before now; the slot then moves past the cancelled
# insert's records, unless a stale mark holds it there
is($node->safe_psql('postgres', 'SELECT forst.checkpoint() > 0'), 't',
	'flushes succeed again once the store is writable');
ok( $node->poll_query_until(
		'postgres',
		"SELECT restart_lsn >= '$after' FROM pg_replication_slots WHERE slot_name = 'forst'"),
	'forst\'s slot moves past the cancelled write')
  or diag($node->safe_psql('postgres',
	  "SELECT restart_lsn, '$after' FROM pg_replication_slots WHERE slot_name = 'forst'"));

# the session still works, and the table holds only the committed rows
$in .= "SELECT 'alive ' || count(*) FROM f;\n";
$writer->pump until $out =~ /alive (\d+)/;
is($1, '10', 'the cancelled insert left no row');
$in .= "\\q\n";
$writer->finish;
ok(!$node->log_contains('TRAP|terminated by signal'), 'no crash');

$node->stop;
done_testing();
