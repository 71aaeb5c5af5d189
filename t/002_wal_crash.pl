# Durability through PostgreSQL's WAL: forst's custom resource manager,
# its replication slot and the catch-up replay at start-up.
#
#  - kill -9 (immediate stop) under a write load: a forst table and a heap
#    twin written by the same transactions are equal after the restart,
#    keyed and keyless, and nothing uncommitted shows;
#  - rows written before a CHECKPOINT (which PostgreSQL's redo does not
#    cover) come back after a crash;
#  - a clean shutdown keeps everything;
#  - pg_waldump and pg_walinspect show forst's records.
#
# FORST_TAP_EXTRA_CONF names a file of extra settings (the s3 step's).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'forst'");
# the s3 step of scripts/test.sh runs this test again with forst.remote_dir
# on S3 (and small memtables): settings from this file
$node->append_conf('postgresql.conf', slurp_file($ENV{FORST_TAP_EXTRA_CONF}))
  if $ENV{FORST_TAP_EXTRA_CONF};
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION forst;
CREATE TABLE f (id bigint PRIMARY KEY, v int NOT NULL, t text) USING forst;
CREATE TABLE h (id bigint PRIMARY KEY, v int NOT NULL, t text);
CREATE TABLE fk (id bigint, v int) USING forst;      -- keyless: hidden row ids
CREATE TABLE hk (id bigint, v int);
CREATE SEQUENCE s;
INSERT INTO f SELECT g, 0, 'row ' || g FROM generate_series(1, 200) g;
INSERT INTO h SELECT g, 0, 'row ' || g FROM generate_series(1, 200) g;
INSERT INTO fk SELECT g, 0 FROM generate_series(1, 50) g;
INSERT INTO hk SELECT g, 0 FROM generate_series(1, 50) g;
SELECT setval('s', 1000);
});

is( $node->safe_psql(
		'postgres',
		"SELECT slot_type, restart_lsn IS NOT NULL FROM pg_replication_slots WHERE slot_name = 'forst'"),
	'physical|t',
	'forst created its physical replication slot with WAL reserved');

# compares each forst table with its heap twin
sub twins_equal
{
	my ($msg) = @_;
	my $diff = $node->safe_psql(
		'postgres', q{
SELECT (SELECT count(*) FROM ((TABLE f EXCEPT ALL TABLE h) UNION ALL (TABLE h EXCEPT ALL TABLE f)) d)
    || ' ' ||
       (SELECT count(*) FROM ((TABLE fk EXCEPT ALL TABLE hk) UNION ALL (TABLE hk EXCEPT ALL TABLE fk)) d)});
	is($diff, '0 0', $msg);
}

# --- (a) kill -9 under load -------------------------------------------------
# The twins' UPDATE and DELETE share a statement (one snapshot): as two
# statements, a row inserted by a transaction that commits between them
# could be changed in h only, as READ COMMITTED allows.
my $script = $node->basedir . '/load.sql';
PostgreSQL::Test::Utils::append_to_file(
	$script, q{
\set r random(1, 200)
\set d random(1, 1200)
\set k random(1, 50)
BEGIN;
SELECT nextval('s') AS n \gset
INSERT INTO f VALUES (:n, 1, 'new ' || :n);
INSERT INTO h VALUES (:n, 1, 'new ' || :n);
WITH u AS (UPDATE f SET v = v + 1, t = t || '.' WHERE id = :r)
UPDATE h SET v = v + 1, t = t || '.' WHERE id = :r;
WITH d AS (DELETE FROM f WHERE id = :d) DELETE FROM h WHERE id = :d;
INSERT INTO fk VALUES (:n, 1);
INSERT INTO hk VALUES (:n, 1);
UPDATE fk SET v = v + 1 WHERE id = :k;
UPDATE hk SET v = v + 1 WHERE id = :k;
COMMIT;
});

# an open transaction that must not survive
my ($in, $out, $err) = ('', '', '');
my $open = IPC::Run::start(
	[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres') ],
	'<', \$in, '>', \$out, '2>', \$err);
$in .= "BEGIN; INSERT INTO f VALUES (-1, -1, 'uncommitted'); INSERT INTO fk VALUES (-1, -1); SELECT 'inserted';\n";
$open->pump until $out =~ /inserted/;

my $bindir = $node->config_data('--bindir');
my ($bout, $berr) = ('', '');
my $bench = IPC::Run::start(
	[ "$bindir/pgbench", '-n', '-c', '4', '-T', '60', '--max-tries=20', '-f', $script, '-h', $node->host,
	  '-p', $node->port, 'postgres' ],
	'>', \$bout, '2>', \$berr);
# a checkpoint in the middle of the load, then more load, then the crash
sleep 2;
$node->safe_psql('postgres', 'CHECKPOINT');
sleep 2;
my $before = $node->safe_psql('postgres', 'SELECT count(*) FROM f');
$node->stop('immediate');
$bench->finish;
$open->kill_kill;
ok($before > 200, "load wrote rows before the crash ($before in f)");

my $offset = -s $node->logfile;
$node->start;
twins_equal('after kill -9 under load: forst tables equal their heap twins');
is($node->safe_psql('postgres', 'SELECT count(*) FROM f WHERE id = -1'),
	'0', 'uncommitted keyed row is not visible');
is($node->safe_psql('postgres', 'SELECT count(*) FROM fk WHERE id = -1'),
	'0', 'uncommitted keyless row is not visible');
cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM f'),
	'>=', 200, 'forst table is not empty after the crash');

# new writes after recovery get fresh sequence numbers and row ids
$node->safe_psql(
	'postgres', q{
INSERT INTO f VALUES (-2, 7, 'after'); INSERT INTO h VALUES (-2, 7, 'after');
UPDATE f SET v = v + 100 WHERE id BETWEEN 1 AND 20;
UPDATE h SET v = v + 100 WHERE id BETWEEN 1 AND 20;
INSERT INTO fk SELECT g, 9 FROM generate_series(1, 20) g;
INSERT INTO hk SELECT g, 9 FROM generate_series(1, 20) g;
UPDATE fk SET v = v + 1 WHERE id < 5; UPDATE hk SET v = v + 1 WHERE id < 5;
});
twins_equal('writes after recovery see the newest versions');
is($node->safe_psql('postgres',
		'SELECT count(*) = count(DISTINCT ctid) FROM fk'),
	't', 'keyless rows keep distinct row ids after recovery');

# --- (b) rows written before a checkpoint come back after a crash -------------
$node->safe_psql(
	'postgres', q{
CREATE TABLE c (id int PRIMARY KEY, v text) USING forst;
INSERT INTO c SELECT g, 'before ' || g FROM generate_series(1, 1000) g;
CREATE TABLE ck (v text) USING forst;
INSERT INTO ck SELECT 'before ' || g FROM generate_series(1, 300) g;
});
$node->safe_psql('postgres', 'CHECKPOINT');
$node->safe_psql(
	'postgres', q{
INSERT INTO c SELECT g, 'after ' || g FROM generate_series(1001, 1500) g;
UPDATE c SET v = v || ' updated' WHERE id % 10 = 0;
DELETE FROM c WHERE id % 100 = 1;
INSERT INTO ck SELECT 'after ' || g FROM generate_series(1, 200) g;
});
my $expect = $node->safe_psql('postgres',
	"SELECT count(*), sum(length(v)), count(*) FILTER (WHERE v LIKE '%updated') FROM c");
$offset = -s $node->logfile;
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres',
		"SELECT count(*), sum(length(v)), count(*) FILTER (WHERE v LIKE '%updated') FROM c"),
	$expect, 'rows from before and after the checkpoint are back after a crash');
is($node->safe_psql('postgres',
		"SELECT count(*) FILTER (WHERE v LIKE 'before%'), count(*) FILTER (WHERE v LIKE 'after%') FROM ck"),
	'300|200', 'keyless table: rows from before and after the checkpoint are back');
ok($node->log_contains(qr/forst: replayed [1-9][0-9]* forst WAL records from/, $offset),
	'the log reports the catch-up replay');

# --- (c) clean shutdown ---------------------------------------------------------
$expect = $node->safe_psql('postgres',
	'SELECT (SELECT count(*) FROM f), (SELECT count(*) FROM fk), (SELECT count(*) FROM c)');
$node->restart;
is($node->safe_psql('postgres',
		'SELECT (SELECT count(*) FROM f), (SELECT count(*) FROM fk), (SELECT count(*) FROM c)'),
	$expect, 'a clean shutdown and restart keeps every row');
twins_equal('after a clean restart: forst tables equal their heap twins');
# and a second crash right after the restart (no forst record since)
$node->stop('immediate');
$node->start;
twins_equal('after a crash following a restart: forst tables equal their heap twins');

# dropped and truncated tables do not come back from the WAL
$node->safe_psql(
	'postgres', q{
CREATE TABLE gone (id int PRIMARY KEY) USING forst;
INSERT INTO gone SELECT generate_series(1, 10);
DROP TABLE gone;
CREATE TABLE tr (id int PRIMARY KEY) USING forst;
INSERT INTO tr SELECT generate_series(1, 10);
TRUNCATE tr;
INSERT INTO tr VALUES (42);
});
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', 'SELECT string_agg(id::text, \',\') FROM tr'),
	'42', 'a truncated table has only its rows after the truncate');

# kill -9 of one backend: the postmaster resets shared memory (memtables
# included) and runs crash recovery; forst rebuilds its memtables
$node->append_conf('postgresql.conf', 'restart_after_crash = on');
$node->reload;
$expect = $node->safe_psql('postgres',
	'SELECT (SELECT count(*) FROM f), (SELECT count(*) FROM fk), (SELECT count(*) FROM c)');
($in, $out, $err) = ('', '', '');
my $victim = IPC::Run::start(
	[ 'psql', '-XAtq', '-d', $node->connstr('postgres') ],
	'<', \$in, '>', \$out, '2>', \$err);
$in .= "SELECT pg_backend_pid();\n";
$victim->pump until $out =~ /^(\d+)$/m;
my $pid = $1;
$offset = -s $node->logfile;
kill 'KILL', $pid;
$victim->finish;
for (my $i = 0; $i < 600; $i++)
{
	last if $node->log_contains(qr/database system is ready to accept connections/, $offset);
	select(undef, undef, undef, 0.1);
}
ok($node->log_contains(qr/all server processes terminated; reinitializing/, $offset),
	'a killed backend made the postmaster reinitialize shared memory');
is($node->safe_psql('postgres',
		'SELECT (SELECT count(*) FROM f), (SELECT count(*) FROM fk), (SELECT count(*) FROM c)'),
	$expect, 'every row is back after the reinitialization');
twins_equal('after a backend crash: forst tables equal their heap twins');

# --- (e) pg_waldump and pg_walinspect -------------------------------------------
my $start = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
$node->safe_psql('postgres',
	"INSERT INTO f VALUES (-3, 3, 'waldump'); DELETE FROM f WHERE id = -3; CREATE TABLE w (a int) USING forst; DROP TABLE w");
my $end = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
$node->safe_psql('postgres', 'SELECT pg_switch_wal()');
my ($stdout, $stderr);
IPC::Run::run(
	[ "$bindir/pg_waldump", '-p', $node->data_dir . '/pg_wal', '-s', $start, '-e', $end,
	  '-r', 'custom163' ],
	'>', \$stdout, '2>', \$stderr);
like($stdout, qr/^rmgr: custom163 .*desc: UNKNOWN \(50\) rmid: 163$/m,
	'pg_waldump lists forst records (as custom163; a row in the short form, PUT_ROW)');
like($stdout, qr/^rmgr: custom163 .*desc: UNKNOWN \(40\) rmid: 163$/m,
	'and a tombstone in the short form, PUT_SHORT');
$node->safe_psql('postgres', 'CREATE EXTENSION pg_walinspect');
my $recs = $node->safe_psql(
	'postgres', qq{
SELECT record_type || ': ' || description FROM pg_get_wal_records_info('$start', '$end')
 WHERE resource_manager = 'forst' ORDER BY start_lsn});
like($recs, qr/^PUT: rel \d+\/\d+\/\d+; seq \d+; xid \d+; cid 0; row; key group \d+; key 8 bytes; row \d+ bytes$/m,
	'pg_walinspect describes a PUT');
like($recs, qr/^PUT: .*; tombstone; .* row 0 bytes$/m, 'and a tombstone');
like($recs, qr/^CREATE: rel \d+\/\d+\/\d+$/m, 'and a CREATE');
like($recs, qr/^DROP: rel \d+\/\d+\/\d+$/m, 'and a DROP');

$node->stop;
done_testing();
