# Point lookups (read/point.c): the newest version of a key the snapshot
# sees, found without a merging cursor, while the key's versions are spread
# over memtables and many SST files that the flush and compaction workers
# rewrite underneath.  Every answer is checked against a sequential scan
# (a merge of all sources, the other read path) and against the values the
# test wrote; also with the flush worker stopped (SIGSTOP), so that a key's
# versions sit in several memtables at once, and while one transaction's
# in-progress versions are flushed.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('point');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
wal_level = replica
max_wal_senders = 0
forst.memtable_size = '1MB'
forst.memtable_memory = '8MB'
});
$node->append_conf('postgresql.conf', slurp_file($ENV{FORST_TAP_EXTRA_CONF}))
  if $ENV{FORST_TAP_EXTRA_CONF};
$node->start;

sub sql { return $node->safe_psql('postgres', $_[0]); }

sql(q{
CREATE EXTENSION forst;
CREATE TABLE p (k bigint PRIMARY KEY, v bigint NOT NULL, pad text) USING forst;
INSERT INTO p SELECT g, 0, repeat('p', 100) FROM generate_series(1, 20000) g;
CREATE SEQUENCE filler START 1000000;
-- ~1.1 MB of other rows: more than a memtable, so it switches
CREATE FUNCTION fill() RETURNS void LANGUAGE sql AS
  $$INSERT INTO p SELECT nextval('filler'), 0, repeat('f', 100) FROM generate_series(1, 6000)$$;
-- keys 1..50 read one by one through the key index (point lookups)
CREATE FUNCTION point_digest() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  d text := '';
  r record;
BEGIN
  SET LOCAL enable_seqscan = off;
  SET LOCAL enable_bitmapscan = off;
  FOR i IN 1..50 LOOP
    SELECT v INTO r FROM p WHERE k = i;
    d := d || i || ':' || coalesce(r.v::text, '-') || ' ';
    r := NULL;
  END LOOP;
  RETURN d;
END $$;
-- the same keys read by a sequential scan (a merge over every source)
CREATE FUNCTION scan_digest() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  d text;
BEGIN
  SET LOCAL enable_indexscan = off;
  SET LOCAL enable_bitmapscan = off;
  SET LOCAL enable_indexonlyscan = off;
  SELECT string_agg(i || ':' || coalesce(q.v::text, '-'), ' ' ORDER BY i) || ' ' INTO d
    FROM generate_series(1, 50) i
    LEFT JOIN (SELECT k, v FROM p WHERE k <= 50) q ON q.k = i;
  RETURN d;
END $$;
CREATE FUNCTION expect_digest(val bigint, deleted int[] DEFAULT '{}') RETURNS text
LANGUAGE sql AS $$
  SELECT string_agg(i || ':' || CASE WHEN i = ANY (deleted) THEN '-' ELSE val::text END, ' ') || ' '
    FROM generate_series(1, 50) i
$$;
});

# 1. Versions of the same keys in many files: each round updates keys 1..50
# and then pushes them out of the memtables.
my $ok = 1;
for my $round (1 .. 25)
{
	sql("UPDATE p SET v = $round WHERE k <= 50; SELECT fill();");
	my $want = sql("SELECT expect_digest($round)");
	my $pt = sql('SELECT point_digest()');
	my $sc = sql('SELECT scan_digest()');
	if ($pt ne $want || $sc ne $want)
	{
		diag("round $round: point $pt\nscan $sc\nwant $want");
		$ok = 0;
		last;
	}
}
ok($ok, 'point lookups find the newest of 25 versions spread over memtables and files');
$node->poll_query_until('postgres',
	"SELECT sst_files >= 1 FROM forst.table_info('p')")
  or die 'no SST files';
is(sql('SELECT point_digest()'), sql('SELECT expect_digest(25)'),
	'... and after the flushes and compactions');

# 2. Tombstones newer than versions in older files hide them.
sql('DELETE FROM p WHERE k % 5 = 0 AND k <= 50; SELECT fill(); SELECT fill();');
my $deleted = '{5,10,15,20,25,30,35,40,45,50}';
is(sql('SELECT point_digest()'), sql("SELECT expect_digest(25, '$deleted')"),
	'a deleted key is absent though older versions are in SST files');
is(sql('SELECT scan_digest()'), sql('SELECT point_digest()'),
	'point lookups agree with a scan');

# 3. Upserts (their conflict check is a point lookup with a dirty snapshot).
is( sql(q{
WITH w AS (INSERT INTO p SELECT g, 1000, 'u' FROM generate_series(1, 50) g
           ON CONFLICT (k) DO UPDATE SET v = p.v + 1 RETURNING v)
SELECT count(*) FILTER (WHERE v = 26) || '/' || count(*) FILTER (WHERE v = 1000) FROM w}),
	'40/10', 'ON CONFLICT updates the 40 live keys and inserts the 10 deleted ones');

# 4. One transaction updates key 7 again and again while its memtables
# fill, switch and flush: its older, in-progress versions are carried over
# into newer memtables (and then files) than its later versions.  Its own
# reads and, after commit, everyone's must see the last one.
my ($out, $err) = ('', '');
$node->psql('postgres', q{
BEGIN;
DO $$
DECLARE
  got bigint;
BEGIN
  FOR i IN 1..15 LOOP
    UPDATE p SET v = v + 1 WHERE k = 7;
    PERFORM fill();
    SET LOCAL enable_seqscan = off;
    SELECT p.v INTO got FROM p WHERE k = 7;
    IF got <> 26 + i THEN
      RAISE EXCEPTION 'update %: the transaction reads %, not %', i, got, 26 + i;
    END IF;
  END LOOP;
END $$;
COMMIT;
}, stdout => \$out, stderr => \$err, on_error_stop => 1);
is($err, '', 'a transaction reads its own newest version through 15 memtable switches');
is(sql('SELECT v FROM p WHERE k = 7'), '41', 'after commit the last update is the row');
sql('SELECT fill(); SELECT fill(); SELECT fill();');
$node->poll_query_until('postgres',
	"SELECT memtable_entries < 20000 FROM forst.table_info('p')");
is(sql('SELECT point_digest()'), sql('SELECT scan_digest()'),
	'point lookups agree with a scan after the flushes');
like(sql('SELECT point_digest()'), qr/ 7:41 /, 'key 7 is still at its last update');

# 5. The same with the flush worker stopped (SIGSTOP while it waits on its
# latch, holding no lock): the key's versions then sit in several memtables
# at once, the oldest in the oldest immutable one.
my $flusher = sql(q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'forst flush'});
sub stop_flusher
{
	for (1 .. 100)
	{
		if (sql("SELECT wait_event_type FROM pg_stat_activity WHERE pid = $flusher") eq 'Extension')
		{
			kill 'STOP', $flusher;
			return 1
			  if sql("SELECT wait_event_type FROM pg_stat_activity WHERE pid = $flusher") eq 'Extension';
			kill 'CONT', $flusher;
		}
		select(undef, undef, undef, 0.05);
	}
	return 0;
}
ok(stop_flusher(), 'the flush worker is stopped while idle');
my $multi = 1;
for my $round (1 .. 3)
{
	sql("UPDATE p SET v = v + 100 WHERE k <= 50 AND k % 5 <> 0; SELECT fill();");
	my $pt = sql('SELECT point_digest()');
	my $sc = sql('SELECT scan_digest()');
	$multi = 0 if $pt ne $sc || $pt !~ / 7:@{[41 + 100 * $round]} /;
	diag("round $round: point $pt\nscan  $sc") if $pt ne $sc;
}
ok($multi, 'point lookups find the newest version with versions in 4 memtables');
cmp_ok(sql(q{SELECT memtables FROM forst.table_info('p')}), '>=', 4,
	'the versions were in at least 4 memtables (the case under test happened)');

# 6. A transaction's in-progress versions flushed while it runs: the flush
# worker stays stopped while the transaction writes 3 versions into 3
# memtables, and resumes while the transaction is still open; its own
# point read then finds its newest version among files and memtables
# written in any order.
my ($tout, $terr) = ('', '');
my $txn = IPC::Run::start(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-c', q{
DO $$
DECLARE
  got bigint;
  before_files int;
BEGIN
  FOR i IN 1..3 LOOP
    UPDATE p SET v = v + 1 WHERE k = 7;
    PERFORM fill();
  END LOOP;
  SELECT sst_files INTO before_files FROM forst.table_info('p');
  RAISE NOTICE 'written';
  -- the test resumes the flush worker now; wait until it has flushed
  FOR i IN 1..600 LOOP
    EXIT WHEN (SELECT memtables FROM forst.table_info('p')) <= 2;
    PERFORM pg_sleep(0.1);
  END LOOP;
  SET LOCAL enable_seqscan = off;
  SELECT p.v INTO got FROM p WHERE k = 7;
  RAISE NOTICE 'own read % memtables %', got,
    (SELECT memtables FROM forst.table_info('p'));
END $$;
} ],
	'>', \$tout, '2>', \$terr);
$node->poll_query_until('postgres',
	q{SELECT count(*) > 0 FROM pg_stat_activity WHERE wait_event = 'PgSleep'})
  or die 'the transaction did not get to its wait';
kill 'CONT', $flusher;
$txn->finish;
like($terr, qr/own read 344 memtables [0-2]\b/,
	'the transaction reads its last version after the flush of its versions')
  or diag($terr);
is(sql('SELECT v FROM p WHERE k = 7'), '344', 'after commit the last version is the row');
sql('SELECT fill(); SELECT fill();');
$node->poll_query_until('postgres',
	"SELECT memtable_entries < 20000 FROM forst.table_info('p')");
is(sql('SELECT v FROM p WHERE k = 7'), '344', '... also once everything is in SST files');
is(sql('SELECT point_digest()'), sql('SELECT scan_digest()'),
	'point lookups agree with a scan');

# 7. Keys that were never written, in a table with many files.
is(sql(q{SET enable_seqscan = off; SELECT count(*) FROM generate_series(-100, 0) g
          WHERE EXISTS (SELECT 1 FROM p WHERE k = g)}), '0', 'absent keys are absent');

ok(!$node->log_contains('TRAP|terminated by signal|malformed'), 'no crash, no malformed entry');
done_testing();
