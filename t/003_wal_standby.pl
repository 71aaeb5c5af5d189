# A streaming standby replays forst's WAL records into its own memtables
# and answers queries on forst tables like the primary.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "shared_preload_libraries = 'forst'");
$primary->start;
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION forst;
CREATE TABLE f (id int PRIMARY KEY, v text) USING forst;
CREATE TABLE fk (v text) USING forst;
INSERT INTO f VALUES (0, 'before the backup');
});

$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;

# A row written before the base backup, still only in the primary's
# memtable then: forst flushed it to an SST file when the backup started,
# so the standby's copy of the store has it.
is($standby->safe_psql('postgres', "SELECT v FROM f WHERE id = 0"),
	'before the backup', 'a row written before the base backup is on the standby');

$primary->safe_psql(
	'postgres', q{
INSERT INTO f SELECT g, 'row ' || g FROM generate_series(1, 2000) g;
UPDATE f SET v = v || ' updated' WHERE id % 3 = 0;
DELETE FROM f WHERE id % 7 = 0;
INSERT INTO fk SELECT 'k' || g FROM generate_series(1, 500) g;
BEGIN; INSERT INTO f VALUES (-1, 'rolled back'); ROLLBACK;
CREATE TABLE t2 (id bigint PRIMARY KEY, n int) USING forst;
INSERT INTO t2 SELECT g, g FROM generate_series(1, 100) g;
TRUNCATE t2;
INSERT INTO t2 VALUES (7, 7);
});
$primary->wait_for_catchup($standby);

my $q = q{
SELECT (SELECT count(*) || ':' || md5(string_agg(id || '=' || v, ',' ORDER BY id)) FROM f WHERE id > 0),
       (SELECT count(*) || ':' || md5(string_agg(v, ',' ORDER BY v)) FROM fk),
       (SELECT string_agg(id || '=' || n, ',') FROM t2),
       (SELECT count(*) FROM f WHERE id = -1)};
my $expect = $primary->safe_psql('postgres', $q);
is($standby->safe_psql('postgres', $q), $expect,
	'standby answers like the primary after catching up');
is($standby->safe_psql('postgres', 'SELECT v FROM f WHERE id = 3'),
	'row 3 updated', 'point lookup on the standby');
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't',
	'standby is in recovery');
my ($ret, $out, $err) =
  $standby->psql('postgres', "INSERT INTO f VALUES (100000, 'x')");
like($err, qr/read-only transaction/, 'standby refuses writes');

# more writes, and a restart of the standby (it replays again from its
# last restartpoint; none happened, so everything is there)
$primary->safe_psql('postgres',
	"UPDATE f SET v = 'again' WHERE id < 10; INSERT INTO fk VALUES ('late')");
$primary->wait_for_catchup($standby);
$expect = $primary->safe_psql('postgres', $q);
is($standby->safe_psql('postgres', $q), $expect, 'standby follows further writes');
$standby->restart;
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $q), $expect,
	'standby answers like the primary after its own restart');

# a concurrent write load on the primary while the standby is queried
my $script = $primary->basedir . '/load.sql';
PostgreSQL::Test::Utils::append_to_file(
	$script, q{
\set r random(1, 3000)
\set k random(1, 2000)
BEGIN;
SELECT nextval('s') AS n \gset
INSERT INTO f VALUES (:n, 'load');
UPDATE f SET v = v || '+' WHERE id = :k;
DELETE FROM f WHERE id = :n - 5 AND :r % 3 = 0;
INSERT INTO fk VALUES ('load ' || :r);
COMMIT;
});
$primary->safe_psql('postgres', 'CREATE SEQUENCE s START 10000');
my $bindir = $primary->config_data('--bindir');
my ($bout, $berr) = ('', '');
my $bench = IPC::Run::start(
	[ "$bindir/pgbench", '-n', '-c', '4', '-T', '3', '-f', $script, '-h', $primary->host,
	  '-p', $primary->port, 'postgres' ],
	'>', \$bout, '2>', \$berr);
my $reads_ok = 1;
while ($bench->pumpable)
{
	my ($r, $o, $e) = $standby->psql('postgres', 'SELECT count(*) FROM f');
	$reads_ok = 0 if $r != 0;
	$bench->pump_nb;
	select(undef, undef, undef, 0.05);
}
$bench->finish;
ok($reads_ok, 'the standby answers queries during the load');
like($bout, qr/number of transactions actually processed: [1-9]/, 'the load ran')
  or diag($berr);
$primary->wait_for_catchup($standby);
$expect = $primary->safe_psql('postgres', $q);
is($standby->safe_psql('postgres', $q), $expect,
	'standby answers like the primary after the load');

# the standby keeps the WAL its memtables need with its own slot, so a
# restartpoint followed by a restart of the standby loses nothing
is($standby->safe_psql('postgres',
		"SELECT slot_type FROM pg_replication_slots WHERE slot_name = 'forst'"),
	'physical', 'the standby created its own forst slot');
# a checkpoint on the primary lets the standby make a restartpoint after it
$primary->safe_psql('postgres', 'CHECKPOINT');
$primary->wait_for_catchup($standby);
my $redo_before = $standby->safe_psql('postgres', 'SELECT redo_lsn FROM pg_control_checkpoint()');
$standby->safe_psql('postgres', 'CHECKPOINT');
isnt($standby->safe_psql('postgres', 'SELECT redo_lsn FROM pg_control_checkpoint()'),
	$redo_before, 'the standby made a restartpoint');
my $offset = -s $standby->logfile;
$standby->stop('immediate');
$standby->start;
$standby->poll_query_until('postgres', 'SELECT count(*) > 0 FROM f');
ok($standby->log_contains(qr/forst: replayed [1-9]\d* forst WAL records from/, $offset),
	'the standby replayed forst records from its slot');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $q), $expect,
	'standby answers like the primary after a restartpoint and a crash');

# a partitioned table keyed by forst: its key and its partitions' rows,
# written by upserts through it, replay on the standby
$primary->safe_psql('postgres', q{
SET default_table_access_method = forst;
CREATE TABLE pp (k int, d int, n int, PRIMARY KEY (k, d)) PARTITION BY RANGE (d);
RESET default_table_access_method;
CREATE TABLE pp_1 PARTITION OF pp FOR VALUES FROM (0) TO (10);
CREATE TABLE pp_2 PARTITION OF pp FOR VALUES FROM (10) TO (20);
INSERT INTO pp SELECT g, g % 20, 1 FROM generate_series(1, 2000) g;
INSERT INTO pp SELECT g, g % 20, 1 FROM generate_series(1000, 3000) g
  ON CONFLICT (k, d) DO UPDATE SET n = pp.n + excluded.n;
DELETE FROM pp WHERE k % 11 = 0;
});
my $pq = q{SELECT count(*), sum(n), sum(k * n) FROM pp;
SELECT tableoid::regclass, n FROM pp WHERE k = 1500 AND d = 0;
SELECT amname FROM pg_am a JOIN pg_class c ON c.relam = a.oid WHERE c.relname = 'pp_pkey'};
$primary->wait_for_catchup($standby);
my $pexpect = $primary->safe_psql('postgres', $pq);
like($pexpect, qr/^2728\|.*\npp_1\|2\nforst_key$/s, 'the primary upserted through the partitioned table');
is($standby->safe_psql('postgres', $pq), $pexpect,
	'the standby has the partitioned table, its forst key and its rows');

# promotion: the new primary writes, crashes, and keeps everything
$primary->stop;
$standby->promote;
$standby->safe_psql('postgres',
	"INSERT INTO f VALUES (5000, 'on the promoted standby'); UPDATE f SET v = 'p' WHERE id = 1; INSERT INTO fk VALUES ('p')");
$standby->safe_psql('postgres',
	"INSERT INTO pp VALUES (1500, 0, 10), (4000, 19, 1) ON CONFLICT (k, d) DO UPDATE SET n = pp.n + excluded.n");
$expect = $standby->safe_psql('postgres', $q);
$pexpect = $standby->safe_psql('postgres', $pq);
$standby->stop('immediate');
$standby->start;
is($standby->safe_psql('postgres', $q), $expect,
	'promoted standby keeps its rows (replicated and its own) across a crash');
is($standby->safe_psql('postgres', $pq), $pexpect,
	'... and those of the partitioned table, upserted through it');
like($pexpect, qr/\npp_1\|12\n/, 'the promoted standby upserted through the partitioned table');

$standby->stop;
done_testing();
