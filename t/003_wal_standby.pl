# A streaming standby replays forst's WAL records into its own memtables
# and answers queries on forst tables like the primary.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

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

# Known gap, pinned down: rows written before the base backup and not yet
# flushed to SST files are not in the backup's WAL, so the standby does not
# have them.  Once the flush to SST files exists the standby reads them
# from there, and this test must then expect the row.
is($standby->safe_psql('postgres', 'SELECT count(*) FROM f WHERE id = 0'),
	'0', 'known gap: a row written before the base backup is not on the standby (needs the flush)');

$standby->stop;
$primary->stop;
done_testing();
