# forst's replication slot: created on demand, a dropped slot is reported
# and created again, and settings that cannot support it are refused.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('slot');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'forst'");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION forst');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'forst'"),
	'0', 'no slot before forst is used');
$node->safe_psql('postgres',
	'CREATE TABLE f (id int PRIMARY KEY, v text) USING forst; INSERT INTO f VALUES (1, \'one\')');
my $restart1 = $node->safe_psql('postgres',
	"SELECT restart_lsn FROM pg_replication_slots WHERE slot_name = 'forst'");
isnt($restart1, '', "CREATE TABLE ... USING forst created the slot ($restart1)");
ok(-f $node->data_dir . '/forst/wal_slot', 'marker file written');

# the slot does not move on its own (nothing is flushed to SST files yet)
$node->safe_psql('postgres', "INSERT INTO f SELECT g, 'x' FROM generate_series(2, 100) g; CHECKPOINT");
is($node->safe_psql('postgres',
		"SELECT restart_lsn FROM pg_replication_slots WHERE slot_name = 'forst'"),
	$restart1, 'restart_lsn stays where the first forst record needs it');

# dropped while running: the next write says so and creates it again
$node->safe_psql('postgres', "SELECT pg_drop_replication_slot('forst')");
my ($ret, $out, $err) =
  $node->psql('postgres', "INSERT INTO f VALUES (200, 'after the drop')");
is($ret, 0, 'write succeeds after the slot was dropped');
like($err,
	qr/WARNING:  forst: replication slot "forst" was dropped; creating it again/,
	'the write warns that the slot was dropped');
like($err, qr/HINT:  Do not drop the replication slot "forst"/, 'with a hint');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'forst'"),
	'1', 'the slot exists again');

# dropped, then a crash: the start-up reports it
$node->safe_psql('postgres', "SELECT pg_drop_replication_slot('forst')");
my $offset = -s $node->logfile;
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*) FROM f WHERE id = 200'),
	'1', 'rows after the last checkpoint are still replayed by PostgreSQL');
ok( $node->log_contains(
		qr/WARNING:  forst: replication slot "forst" is missing/, $offset),
	'start-up reports the missing slot');
$node->safe_psql('postgres', "INSERT INTO f VALUES (201, 'x')");
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'forst'"),
	'1', 'the slot exists again after the restart');
$node->stop;

# wal_level = minimal: the server starts, forst refuses to write
my $min = PostgreSQL::Test::Cluster->new('minimal');
$min->init;    # wal_level = minimal, max_wal_senders = 0
$min->append_conf('postgresql.conf', "shared_preload_libraries = 'forst'");
$min->start;
ok($min->log_contains(qr/WARNING:  forst tables are read-only: forst needs wal_level = replica or logical and max_replication_slots > 0/),
	'start-up warns about wal_level = minimal');
$min->safe_psql('postgres', 'CREATE EXTENSION forst');
($ret, $out, $err) =
  $min->psql('postgres', 'CREATE TABLE f (id int PRIMARY KEY) USING forst');
isnt($ret, 0, 'CREATE TABLE USING forst fails with wal_level = minimal');
like($err,
	qr/ERROR:  forst tables cannot be written with wal_level = minimal and max_replication_slots = \d+/,
	'error names wal_level');
like($err, qr/HINT:  Set wal_level = replica/, 'hint says what to set');

# max_replication_slots = 0
$min->append_conf('postgresql.conf', "wal_level = replica\nmax_replication_slots = 0");
$min->restart;
($ret, $out, $err) =
  $min->psql('postgres', 'CREATE TABLE f (id int PRIMARY KEY) USING forst');
like($err,
	qr/ERROR:  forst tables cannot be written with wal_level = replica and max_replication_slots = 0/,
	'max_replication_slots = 0 is refused too');
$min->stop;
done_testing();
