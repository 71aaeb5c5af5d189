# Flushing memtables to SST files and compacting them, under small memory:
# the state is many times the memtable pool, and a heap twin written with
# the same statements must read the same before and after restarts and a
# crash.  Files appear in the object store, compaction merges level 0, and
# forst's slot keeps up with the flushes.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('flush');
$node->init(allows_streaming => 1);
# the s3 step of scripts/test.sh runs this test again with forst.remote_dir
# on S3: settings from FORST_TAP_EXTRA_CONF (the memory settings below win)
my $remote_s3 = $ENV{FORST_TAP_EXTRA_CONF} ? 1 : 0;
$node->append_conf('postgresql.conf', slurp_file($ENV{FORST_TAP_EXTRA_CONF}))
  if $remote_s3;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
forst.memtable_size = '1MB'
forst.memtable_memory = '4MB'
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE f (k bigint, w int, v text, PRIMARY KEY (k, w)) USING forst;
CREATE TABLE h (k bigint, w int, v text, PRIMARY KEY (k, w));
CREATE TABLE fk (a int, b text) USING forst;
CREATE TABLE hk (a int, b text);
});

my $data = $node->data_dir;
sub sst_count
{
	return $node->safe_psql('postgres', 'SELECT coalesce(sum(sst_files), 0) FROM forst.tables')
	  if $remote_s3;
	my @f = glob("$data/forst/remote/*/tables/*/sst/*/*.sst");
	return scalar @f;
}

# 30 rounds of upserts, updates and deletes: ~12 MB of versions through a
# 4 MB pool, each statement applied to both twins
for my $r (1 .. 30)
{
	my $sql = qq{
INSERT INTO f SELECT ($r * 1500 + g) % 30000, g % 7, repeat('x', 200) || $r FROM generate_series(1, 2000) g
  ON CONFLICT (k, w) DO UPDATE SET v = excluded.v;
INSERT INTO h SELECT ($r * 1500 + g) % 30000, g % 7, repeat('x', 200) || $r FROM generate_series(1, 2000) g
  ON CONFLICT (k, w) DO UPDATE SET v = excluded.v;
UPDATE f SET v = 'u$r' WHERE k % 97 = $r % 97;
UPDATE h SET v = 'u$r' WHERE k % 97 = $r % 97;
DELETE FROM f WHERE k % 31 = $r % 31 AND w = 3;
DELETE FROM h WHERE k % 31 = $r % 31 AND w = 3;
INSERT INTO fk SELECT g, repeat('y', 100) FROM generate_series(1, 300) g;
INSERT INTO hk SELECT g, repeat('y', 100) FROM generate_series(1, 300) g;
};
	$node->safe_psql('postgres', $sql);
}
# a transaction larger than the whole memtable pool, rolled back
$node->safe_psql('postgres', q{
BEGIN;
INSERT INTO f SELECT 100000 + g, 0, repeat('z', 300) FROM generate_series(1, 20000) g;
ROLLBACK;
});

my $cmp = q{
SELECT (SELECT count(*) FROM f), (SELECT count(*) FROM h),
       (SELECT count(*) FROM (SELECT * FROM f EXCEPT SELECT * FROM h) d),
       (SELECT count(*) FROM (SELECT * FROM h EXCEPT SELECT * FROM f) d),
       (SELECT count(*) FROM (SELECT * FROM fk EXCEPT ALL SELECT * FROM hk) d)
         + (SELECT count(*) FROM (SELECT * FROM hk EXCEPT ALL SELECT * FROM fk) d)};
my ($nf, $nh, $d1, $d2, $dk) = split /\|/, $node->safe_psql('postgres', $cmp);
ok($nf > 1000, "forst has rows ($nf)");
is("$nf|$d1|$d2|$dk", "$nh|0|0|0", 'forst equals its heap twin');
ok(sst_count() > 0, 'memtables were flushed to SST files (' . sst_count() . ')');

# point lookups and key ranges through SST files
is($node->safe_psql('postgres', q{
SET enable_seqscan = off;
SELECT count(*) FROM f WHERE k = 1234}),
	$node->safe_psql('postgres', 'SELECT count(*) FROM h WHERE k = 1234'),
	'key lookups agree');
# Many point reads by full key (the cursor then skips SST files by key
# range and bloom filter) and by key prefix (key range only), including
# deleted keys and keys never written: the same answers as heap.
my $points = q{
SET enable_seqscan = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT md5(string_agg(g || ':' || coalesce(x.v, '-') || ':' || coalesce(y.n, -1), ',' ORDER BY g))
  FROM generate_series(0, 30100, 3) g
  LEFT JOIN LATERAL (SELECT v FROM TBL WHERE k = g AND w = g % 7) x ON true
  LEFT JOIN LATERAL (SELECT count(*) AS n FROM TBL WHERE k = g) y ON true};
my $point_sql = sub { my $t = shift; (my $q = $points) =~ s/TBL/$t/g; return $q; };
(my $explain = $point_sql->('f')) =~ s/\nSELECT md5/\nEXPLAIN (COSTS OFF) SELECT md5/;
like($node->safe_psql('postgres', $explain),
	qr/Index Scan using f_pkey on f/, 'point reads use the forst_key index');
is($node->safe_psql('postgres', $point_sql->('f')), $node->safe_psql('postgres', $point_sql->('h')),
	'point reads by full key and by prefix agree');
is($node->safe_psql('postgres', q{
SET enable_seqscan = off;
SELECT string_agg(k || ':' || w || ':' || v, ',' ORDER BY k, w) FROM f WHERE k BETWEEN 100 AND 140}),
	$node->safe_psql('postgres',
		"SELECT string_agg(k || ':' || w || ':' || v, ',' ORDER BY k, w) FROM h WHERE k BETWEEN 100 AND 140"),
	'key ranges agree');

# compaction keeps level 0 short: wait for the worker to settle
my $manifests = sub {
	return $node->safe_psql('postgres', 'SELECT coalesce(max(manifest_version), 0) FROM forst.tables')
	  if $remote_s3;
	my @m = glob("$data/forst/remote/*/tables/*/manifest/*");
	return scalar @m;
};
ok($manifests->() > 1, 'manifest versions were published');
is($node->safe_psql('postgres',
	"SELECT sst_files > 0 AND manifest_version > 1 AND sst_bytes > 0 FROM forst.tables WHERE \"table\" = 'f'::regclass"),
	't', 'forst.tables shows the SST files');
is($node->safe_psql('postgres',
	"SELECT count(*) = (SELECT sst_files FROM forst.tables WHERE \"table\" = 'f'::regclass) AND sum(entries) > 0 FROM forst.files WHERE \"table\" = 'f'::regclass"),
	't', 'forst.files lists them');

my ($slot) = $node->safe_psql('postgres',
	"SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn) < 64 * 1024 * 1024 FROM pg_replication_slots WHERE slot_name = 'forst'");
is($slot, 't', 'the forst slot follows the flushes');

$node->restart;
($nf, $nh, $d1, $d2, $dk) = split /\|/, $node->safe_psql('postgres', $cmp);
is("$nf|$d1|$d2|$dk", "$nh|0|0|0", 'equal after a clean restart');
is($node->safe_psql('postgres', $point_sql->('f')), $node->safe_psql('postgres', $point_sql->('h')),
	'point reads agree after a clean restart');

$node->safe_psql('postgres', q{
UPDATE f SET v = 'after' WHERE k < 50;
UPDATE h SET v = 'after' WHERE k < 50;
CHECKPOINT;
DELETE FROM f WHERE k BETWEEN 50 AND 60;
DELETE FROM h WHERE k BETWEEN 50 AND 60;
});
$node->stop('immediate');
$node->start;
($nf, $nh, $d1, $d2, $dk) = split /\|/, $node->safe_psql('postgres', $cmp);
is("$nf|$d1|$d2|$dk", "$nh|0|0|0", 'equal after a crash');
is($node->safe_psql('postgres', $point_sql->('f')), $node->safe_psql('postgres', $point_sql->('h')),
	'point reads agree after a crash');

# after a restart, an INSERT into a keyless table is the first thing that
# touches it: its hidden row ids must not reuse those of flushed rows
$node->restart;
$node->safe_psql('postgres', q{
INSERT INTO fk SELECT g, 'restarted' FROM generate_series(1, 500) g;
INSERT INTO hk SELECT g, 'restarted' FROM generate_series(1, 500) g;
});
($nf, $nh, $d1, $d2, $dk) = split /\|/, $node->safe_psql('postgres', $cmp);
is($dk, '0', 'keyless rows inserted first after a restart add to the flushed ones');
is($node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT ctid) FROM fk'),
	't', 'and keep distinct row ids');

$node->stop;
done_testing();
