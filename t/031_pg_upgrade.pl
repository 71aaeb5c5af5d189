# pg_upgrade of a server with forst tables, as docs/operations.md tells it:
# a forst checkpoint of each database right before the old server stops,
# pg_upgrade (here from PostgreSQL 15 to the same binaries: the system
# identifier, which names the store prefix, changes all the same), then in
# each database of the new server forst.restore(... into_existing => true)
# from that database's checkpoint of the old cluster.  The new server's
# tables then hold exactly the old rows (compared with heap twins written
# in the same transactions), keep their TTL settings, take writes, and
# survive a restart; the new server made no slot during the upgrade (no
# "slot is missing" warning, no WAL error).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $store = PostgreSQL::Test::Utils::tempdir('store');
my $conf = qq{
shared_preload_libraries = 'forst'
wal_level = replica
forst.memtable_size = '1MB'
forst.memtable_memory = '8MB'
forst.checkpoint_interval = 0
forst.remote_dir = 'file://$store'
};

my $old = PostgreSQL::Test::Cluster->new('old');
$old->init;
$old->append_conf('postgresql.conf', $conf);
$old->start;

my %checkpoint;
for my $db ('postgres', 'second')
{
	$old->safe_psql('postgres', "CREATE DATABASE $db") if $db ne 'postgres';
	$old->safe_psql(
		$db, q{
CREATE EXTENSION forst;
CREATE TABLE f (k bigint, w timestamptz, v text, PRIMARY KEY (k, w)) USING forst;
CREATE TABLE h (k bigint, w timestamptz, v text, PRIMARY KEY (k, w));
CREATE TABLE fk (a int, b text) USING forst;
CREATE TABLE hk (a int, b text);
-- a partitioned table keyed by forst, and its heap twin
SET default_table_access_method = forst;
CREATE TABLE pp (k int, d int, v text, PRIMARY KEY (k, d)) PARTITION BY RANGE (d);
RESET default_table_access_method;
CREATE TABLE pp_1 PARTITION OF pp FOR VALUES FROM (0) TO (10);
CREATE TABLE pp_2 PARTITION OF pp FOR VALUES FROM (10) TO (20);
CREATE TABLE ph (k int, d int, v text, PRIMARY KEY (k, d)) PARTITION BY RANGE (d);
CREATE TABLE ph_1 PARTITION OF ph FOR VALUES FROM (0) TO (20);
INSERT INTO pp SELECT g, g % 20, 'p' || g FROM generate_series(1, 1000) g;
INSERT INTO ph SELECT * FROM pp;
SELECT forst.set_ttl('f', 'w', '1 day');
BEGIN;
INSERT INTO f SELECT k, timestamptz '2100-01-01' + h * interval '1 hour', repeat('x', 100) || k
  FROM generate_series(0, 2999) k, generate_series(0, 4) h;
INSERT INTO h SELECT k, timestamptz '2100-01-01' + h * interval '1 hour', repeat('x', 100) || k
  FROM generate_series(0, 2999) k, generate_series(0, 4) h;
INSERT INTO f SELECT k, timestamptz '2100-01-01', 'upserted ' || k FROM generate_series(0, 2999, 3) k
    ON CONFLICT (k, w) DO UPDATE SET v = excluded.v;
INSERT INTO h SELECT k, timestamptz '2100-01-01', 'upserted ' || k FROM generate_series(0, 2999, 3) k
    ON CONFLICT (k, w) DO UPDATE SET v = excluded.v;
INSERT INTO fk SELECT g, current_database() FROM generate_series(1, 500) g;
INSERT INTO hk SELECT g, current_database() FROM generate_series(1, 500) g;
COMMIT;
DELETE FROM f WHERE k % 7 = 0;
DELETE FROM h WHERE k % 7 = 0;
});
	$checkpoint{$db} = $old->safe_psql($db, 'SELECT forst.checkpoint()');
	ok($checkpoint{$db} > 0, "forst checkpoint of database $db on the old server");
}
my $old_cluster = $old->safe_psql('postgres', 'SELECT forst.cluster_id()');
$old->stop;

my $new = PostgreSQL::Test::Cluster->new('new');
$new->init;
$new->append_conf('postgresql.conf', $conf);

my $bindir = $new->config_data('--bindir');
command_ok(
	[
		'pg_upgrade', '--no-sync',
		'-d', $old->data_dir, '-D', $new->data_dir,
		'-b', $bindir, '-B', $bindir,
		'-p', $old->port, '-P', $new->port
	],
	'pg_upgrade of a server with forst tables');
$new->start;

my $new_cluster = $new->safe_psql('postgres', 'SELECT forst.cluster_id()');
isnt($new_cluster, $old_cluster, 'the new server has a new cluster id');

my $same = q{
SELECT (SELECT count(*) FROM f),
       (SELECT count(*) FROM (SELECT * FROM f EXCEPT ALL SELECT * FROM h) x) +
       (SELECT count(*) FROM (SELECT * FROM h EXCEPT ALL SELECT * FROM f) x) +
       (SELECT count(*) FROM (SELECT * FROM fk EXCEPT ALL SELECT * FROM hk) x) +
       (SELECT count(*) FROM (SELECT * FROM hk EXCEPT ALL SELECT * FROM fk) x) +
       (SELECT count(*) FROM (SELECT * FROM pp EXCEPT ALL SELECT * FROM ph) x) +
       (SELECT count(*) FROM (SELECT * FROM ph EXCEPT ALL SELECT * FROM pp) x)};
for my $db ('postgres', 'second')
{
	is($new->safe_psql($db, 'SELECT count(*) FROM f'),
		'0', "$db: after pg_upgrade alone the forst table is empty");
	my $restored = $new->safe_psql(
		$db, qq{
SELECT string_agg(r::text, ',' ORDER BY r::text)
  FROM forst.restore(checkpoint => $checkpoint{$db}, cluster => '$old_cluster',
                     mode => 'claim', into_existing => true) r});
	is($restored, 'f,fk,pp_1,pp_2', "$db: forst.restore into the existing tables");
	is( $new->safe_psql(
			$db, q{SELECT string_agg(c.relname || '=' || a.amname, ',' ORDER BY c.relname)
  FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname LIKE 'pp%'}),
		'pp_1=forst,pp_1_pkey=forst_key,pp_2=forst,pp_2_pkey=forst_key,pp_pkey=forst_key',
		"$db: the partitioned table's key is forst's after pg_upgrade");
	my $expect = $new->safe_psql($db, 'SELECT count(*) FROM h');
	is($new->safe_psql($db, $same), "$expect|0",
		"$db: the restored tables equal their heap twins");
	is( $new->safe_psql(
			$db, 'SELECT ttl_column, ttl FROM forst.table_expiry(\'f\')'),
		'w|1 day',
		"$db: the TTL setting came through pg_upgrade");
	is($new->safe_psql($db, 'SELECT DISTINCT b FROM fk'),
		$db, "$db: each database got its own tables' rows");
	$new->safe_psql(
		$db, q{
BEGIN;
INSERT INTO f VALUES (1, '2100-02-01', 'new') ON CONFLICT (k, w) DO UPDATE SET v = 'again';
INSERT INTO h VALUES (1, '2100-02-01', 'new') ON CONFLICT (k, w) DO UPDATE SET v = 'again';
UPDATE f SET v = 'updated' WHERE k = 2;
UPDATE h SET v = 'updated' WHERE k = 2;
INSERT INTO pp VALUES (5, 5, 'x'), (2000, 15, 'y') ON CONFLICT (k, d) DO UPDATE SET v = pp.v || '+';
INSERT INTO ph VALUES (5, 5, 'x'), (2000, 15, 'y') ON CONFLICT (k, d) DO UPDATE SET v = ph.v || '+';
COMMIT;
});
}

$new->restart;
for my $db ('postgres', 'second')
{
	my $expect = $new->safe_psql($db, 'SELECT count(*) FROM h');
	is($new->safe_psql($db, $same), "$expect|0",
		"$db: after a restart, old and new rows are there");
}
my $log = slurp_file($new->logfile);
unlike($log, qr/replication slot "forst" (is missing|was dropped|was invalidated)/,
	'the new server never lost its slot');
unlike($log, qr/has already been removed/, 'no WAL the new server needed was missing');

done_testing();
