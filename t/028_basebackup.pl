# Base backups made by pg_basebackup while forst tables are written hold
# every committed row:
#
#  - rows still only in the primary's memtables when the backup starts
#    (its WAL, from the backup's checkpoint on, does not have them) and
#    rows written by transactions running during the backup;
#  - with -X stream (fast checkpoint) and -X fetch (spread checkpoint);
#  - each backup started as a server of its own (recovery to the end of
#    the backup) and as a streaming standby that is then promoted;
#  - with the default object store, inside the data directory, which the
#    backup copies while the primary flushes into it;
#  - the low-level API (pg_backup_start, a file copy, pg_backup_stop), with
#    a copy of the store holding manifests whose SST files it lacks;
#  - a backup of a standby whose memtables hold rows is refused, and
#    forst.gc() deletes nothing while a backup runs.
#
# Every transaction writes a forst table and its heap twin alike, so the
# heap twin is what PostgreSQL itself restored: forst must equal it.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use File::Copy;
use File::Find;
use PostgreSQL::Test::RecursiveCopy;

my $conf = q{
shared_preload_libraries = 'forst'
forst.memtable_size = '1MB'
forst.memtable_memory = '64MB'
checkpoint_timeout = '1h'
log_replication_commands = off
};

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', $conf);
$primary->start;
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION forst;
CREATE TABLE f (id bigint PRIMARY KEY, v int NOT NULL, t text) USING forst;
CREATE TABLE h (id bigint PRIMARY KEY, v int NOT NULL, t text);
CREATE TABLE fk (id bigint, v int) USING forst;      -- keyless: hidden row ids
CREATE TABLE hk (id bigint, v int);
CREATE SEQUENCE s START 100000;
});

# Rows before the backup: many flushed to SST files, the last ones still in
# the memtables, and a checkpoint after them (so the backup's WAL lacks them)
$primary->safe_psql(
	'postgres', q{
INSERT INTO f SELECT g, 0, repeat('x', 60) || g FROM generate_series(1, 20000) g;
INSERT INTO h SELECT g, 0, repeat('x', 60) || g FROM generate_series(1, 20000) g;
INSERT INTO fk SELECT g, 0 FROM generate_series(1, 3000) g;
INSERT INTO hk SELECT g, 0 FROM generate_series(1, 3000) g;
});

# the tail of the rows, small enough to stay in the active memtables
sub write_tail
{
	my ($from) = @_;
	$primary->safe_psql(
		'postgres', qq{
BEGIN;
INSERT INTO f SELECT g, 1, 'tail ' || g FROM generate_series($from, $from + 299) g;
INSERT INTO h SELECT g, 1, 'tail ' || g FROM generate_series($from, $from + 299) g;
UPDATE f SET v = 2 WHERE id BETWEEN $from - 500 AND $from - 400;
UPDATE h SET v = 2 WHERE id BETWEEN $from - 500 AND $from - 400;
DELETE FROM f WHERE id BETWEEN $from - 300 AND $from - 250;
DELETE FROM h WHERE id BETWEEN $from - 300 AND $from - 250;
INSERT INTO fk SELECT g, 1 FROM generate_series($from, $from + 99) g;
INSERT INTO hk SELECT g, 1 FROM generate_series($from, $from + 99) g;
COMMIT;
CHECKPOINT;
});
	return;
}

# The load during the backups: both tables in each transaction.
my $script = $primary->basedir . '/load.sql';
append_to_file(
	$script, q{
\set k random(1, 20000)
\set d random(1, 20000)
BEGIN;
SELECT nextval('s') AS n \gset
INSERT INTO f VALUES (:n, :k, 'load');
INSERT INTO h VALUES (:n, :k, 'load');
UPDATE f SET v = v + 1 WHERE id = :k;
UPDATE h SET v = v + 1 WHERE id = :k;
DELETE FROM f WHERE id = :d AND :k % 3 = 0;
DELETE FROM h WHERE id = :d AND :k % 3 = 0;
INSERT INTO fk VALUES (:n, :k);
INSERT INTO hk VALUES (:n, :k);
COMMIT;
});

my $twins = q{
SELECT (SELECT count(*) FROM ((TABLE f EXCEPT ALL TABLE h) UNION ALL (TABLE h EXCEPT ALL TABLE f)) d)
    || ' ' ||
       (SELECT count(*) FROM ((TABLE fk EXCEPT ALL TABLE hk) UNION ALL (TABLE hk EXCEPT ALL TABLE fk)) d)};
my $counts = q{SELECT (SELECT count(*) FROM h) || ' ' || (SELECT count(*) FROM hk)};

# Takes a backup with pg_basebackup while pgbench writes; returns the
# number of heap rows committed before the backup started.
sub backup_under_load
{
	my ($name, @options) = @_;
	my $bindir = $primary->config_data('--bindir');
	my ($bout, $berr) = ('', '');
	my $start = $primary->safe_psql('postgres', 'SELECT last_value FROM s');
	my $bench = IPC::Run::start(
		[
			"$bindir/pgbench", '-n', '-c', '2', '-T', '6', '-f', $script,
			'-h', $primary->host, '-p', $primary->port, 'postgres'
		],
		'>', \$bout, '2>', \$berr);
	# the load runs before the backup starts
	$primary->poll_query_until('postgres',
		"SELECT last_value > $start + 50 FROM s")
	  or die "the load did not start";
	my ($before) = split / /, $primary->safe_psql('postgres', $counts);
	my $unflushed = $primary->safe_psql('postgres',
		q{SELECT sum(memtable_entries) FROM forst.tables WHERE "table" IN ('f'::regclass, 'fk'::regclass)});
	$primary->backup($name, backup_options => \@options);
	$bench->finish;
	like($bout, qr/number of transactions actually processed: [1-9]/,
		"$name: the load ran during the backup")
	  or diag($berr);
	is($primary->safe_psql('postgres', $twins), '0 0', "$name: on the primary, forst equals heap")
	  or diag($primary->safe_psql('postgres',
		q{SELECT 'forst', * FROM (TABLE f EXCEPT ALL TABLE h) a UNION ALL SELECT 'heap', * FROM (TABLE h EXCEPT ALL TABLE f) b}));
	cmp_ok($unflushed, '>', 0,
		"$name: forst rows were in memtables, not yet in SST files, when the backup started ($unflushed)");
	return $before;
}

# Checks a server started from a backup: forst equals heap, and it holds
# at least what was committed before the backup started.
sub check_restored
{
	my ($node, $what, $before) = @_;
	is($node->safe_psql('postgres', $twins), '0 0', "$what: forst tables equal their heap twins")
	  or diag($node->safe_psql('postgres',
		q{SELECT 'forst', * FROM (TABLE f EXCEPT ALL TABLE h) a UNION ALL SELECT 'heap', * FROM (TABLE h EXCEPT ALL TABLE f) b}));
	my ($rows) = split / /, $node->safe_psql('postgres', $counts);
	cmp_ok($rows, '>', $before,
		"$what: rows committed before and during the backup are there ($rows > $before)");
	is($node->safe_psql('postgres', q{SELECT count(*) FROM f WHERE t LIKE 'tail %'}),
		$node->safe_psql('postgres', q{SELECT count(*) FROM h WHERE t LIKE 'tail %'}),
		"$what: the rows that were only in memtables at the backup's start");
	ok(!$node->log_contains(qr/replication slot "forst" is missing/),
		"$what: no warning about lost rows");
	return;
}

my %backups = (
	stream => [ '-X', 'stream' ],
	fetch => [ '-X', 'fetch', '--checkpoint', 'spread' ],);
my $tail = 50000;
my $offset;
for my $mode (sort keys %backups)
{
	write_tail($tail);
	$tail += 1000;
	$offset = -s $primary->logfile;
	my $before = backup_under_load("b_$mode", @{ $backups{$mode} });
	ok($primary->log_contains(qr/forst: BASE_BACKUP: forst rows logged before/, $offset),
		"$mode: forst flushed its memtables at the backup's start");
	ok(!$primary->log_contains(qr/received replication command/, $offset),
		"$mode: replication commands are not logged (log_replication_commands is off)");

	# the backup as a server of its own
	my $server = PostgreSQL::Test::Cluster->new("server_$mode");
	$server->init_from_backup($primary, "b_$mode");
	$server->start;
	check_restored($server, "$mode, as a server", $before);
	ok($server->log_contains(qr/forst: started from a base backup/),
		"$mode, as a server: forst knew that it started from a base backup");
	# it goes on as a primary of its own, across a crash
	$server->safe_psql('postgres',
		"INSERT INTO f VALUES (1, 9, 'after'), (-1, 9, 'after') ON CONFLICT (id) DO UPDATE SET t = 'after';
		 INSERT INTO h VALUES (1, 9, 'after'), (-1, 9, 'after') ON CONFLICT (id) DO UPDATE SET t = 'after'");
	$server->stop('immediate');
	$server->start;
	is($server->safe_psql('postgres', $twins), '0 0',
		"$mode, as a server: forst equals heap after its own writes and a crash");
	$server->stop;

	# the backup as a standby, promoted once it caught up
	my $standby = PostgreSQL::Test::Cluster->new("standby_$mode");
	$standby->init_from_backup($primary, "b_$mode", has_streaming => 1);
	$standby->start;
	$primary->wait_for_catchup($standby);
	is($standby->safe_psql('postgres', $twins), '0 0', "$mode, as a standby: forst equals heap");
	$standby->promote;
	check_restored($standby, "$mode, standby promoted", $before);
	$standby->stop;
}

# The low-level API, pg_backup_start() and a file copy, with a copy of the
# store that has a manifest written after the copy of its SST files (a
# flush during the copy): the restored server takes the newest complete
# version, and the WAL replay restores the rest.
{
	write_tail($tail);
	my $copy = $primary->backup_dir . '/b_lowlevel';
	my $pgdata = $primary->data_dir;
	my $session = $primary->background_psql('postgres');
	$offset = -s $primary->logfile;
	$session->query_safe("SELECT pg_backup_start('low-level', true)");
	ok($primary->log_contains(qr/forst: pg_backup_start: forst rows logged before/, $offset),
		'low-level: pg_backup_start() flushed the memtables first');
	PostgreSQL::Test::RecursiveCopy::copypath(
		$pgdata, $copy,
		filterfn => sub {
			my $src = shift;
			return $src ne 'postmaster.pid' && $src !~ m{^pg_(wal|replslot)/.};
		});

	# writes after the copy of the store: flushed into new SST files and a
	# new manifest, of which the copy gets only the manifest
	my $v0 = $primary->safe_psql('postgres',
		q{SELECT manifest_version FROM forst.tables WHERE "table" = 'f'::regclass});
	$primary->safe_psql('postgres', q{
BEGIN;
INSERT INTO f SELECT g, 3, repeat('y', 60) || g FROM generate_series(200001, 230000) g;
INSERT INTO h SELECT g, 3, repeat('y', 60) || g FROM generate_series(200001, 230000) g;
DELETE FROM f WHERE id BETWEEN 1000 AND 1100;
DELETE FROM h WHERE id BETWEEN 1000 AND 1100;
COMMIT;
});
	$primary->poll_query_until('postgres',
		qq{SELECT manifest_version > $v0 FROM forst.tables WHERE "table" = 'f'::regclass})
	  or die "no flush after the copy";
	my @manifests;
	File::Find::find(sub { push @manifests, $File::Find::name if -f $_ && $File::Find::dir =~ m{/manifest$} },
		"$pgdata/forst/remote");
	for my $m (@manifests)
	{
		(my $rel = $m) =~ s{^\Q$pgdata\E/}{};
		File::Copy::copy($m, "$copy/$rel") unless -e "$copy/$rel";
	}

	my $label = $session->query_safe("SELECT labelfile FROM pg_backup_stop(false)");
	$session->quit;
	append_to_file("$copy/backup_label", "$label\n");
	# the WAL up to the backup's end (pg_backup_stop switched segments)
	opendir(my $wal, "$pgdata/pg_wal") or die "opendir: $!";
	for my $seg (readdir $wal)
	{
		File::Copy::copy("$pgdata/pg_wal/$seg", "$copy/pg_wal/$seg") if -f "$pgdata/pg_wal/$seg";
	}
	closedir $wal;

	my $low = PostgreSQL::Test::Cluster->new('server_lowlevel');
	$low->init_from_backup($primary, 'b_lowlevel');
	$low->start;
	is($low->safe_psql('postgres', $twins), '0 0',
		'low-level: forst tables equal their heap twins')
	  or diag($low->safe_psql('postgres',
		q{SELECT 'forst', * FROM (TABLE f EXCEPT ALL TABLE h) a UNION ALL SELECT 'heap', * FROM (TABLE h EXCEPT ALL TABLE f) b LIMIT 20}));
	is($low->safe_psql('postgres', 'SELECT count(*) FROM f WHERE id > 200000'), '30000',
		'low-level: the rows written during the backup are there');
	ok($low->log_contains(qr/forst: manifest version \d+ of table \S+ lists SST file .*, which the store lacks/),
		'low-level: the copy\'s incomplete manifest was passed over');
	$low->stop;
}

# a backup from a standby whose memtables hold rows is refused, clearly
my $standby = PostgreSQL::Test::Cluster->new('standby_src');
$primary->backup('b_src');
$standby->init_from_backup($primary, 'b_src', has_streaming => 1);
$standby->start;
$primary->safe_psql('postgres', "INSERT INTO f VALUES (-5, 0, 'x'); INSERT INTO h VALUES (-5, 0, 'x')");
$primary->wait_for_catchup($standby);
my ($ret, $out, $err) = ('', '', '');
$ret = IPC::Run::run(
	[
		'pg_basebackup', '-D', $standby->basedir . '/from_standby', '-h', $standby->host,
		'-p', $standby->port, '-X', 'none', '--no-sync'
	],
	'>', \$out, '2>', \$err);
ok(!$ret, 'a base backup of a standby with forst rows in memory fails');
like($err, qr/a base backup of a standby is refused while its memtables hold forst rows/,
	'... saying why');
$standby->stop;

# The SQL API: pg_backup_start() prepares the same way, and forst.gc()
# deletes nothing until pg_backup_stop()
$offset = -s $primary->logfile;
my $gc = q{SELECT count(*) FROM forst.gc()};
$primary->psql('postgres',
	"SELECT pg_backup_start('gc test', true); $gc; SELECT lsn FROM pg_backup_stop(); $gc",
	stderr => \$err, on_error_stop => 1);
is(() = $err =~ /garbage collection deletes nothing while a base backup runs/g, 1,
	'forst.gc() keeps every object between pg_backup_start() and pg_backup_stop() only');
ok($primary->log_contains(qr/forst: pg_backup_start: forst rows logged before/, $offset),
	'pg_backup_start() flushes the memtables too');

$primary->stop;
done_testing();
