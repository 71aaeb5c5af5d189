# Garbage collection, checkpoints and attach while the tables are written:
# pgbench upserts into forst tables and their heap twins with small
# memtables (flushes and compactions all the time) while another session
# runs forst.gc() (grace 1 s) and forst.checkpoint() in a loop and attaches
# checkpoints.  gc must never delete a file an upload, a manifest or a
# retained checkpoint still needs: afterwards, and after a restart, every
# forst table equals its heap twin, and every retained checkpoint restores.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('gc');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
wal_level = replica
max_wal_senders = 0
forst.memtable_size = '1MB'
forst.memtable_memory = '8MB'
forst.checkpoint_interval = 0
forst.checkpoints_retained = 2
});
$node->append_conf('postgresql.conf', slurp_file($ENV{FORST_TAP_EXTRA_CONF}))
  if $ENV{FORST_TAP_EXTRA_CONF};
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE f (k bigint PRIMARY KEY, n bigint NOT NULL, t text) USING forst;
CREATE TABLE h (k bigint PRIMARY KEY, n bigint NOT NULL, t text);
CREATE TABLE g (k bigint PRIMARY KEY, v text) USING forst;
CREATE TABLE gh (k bigint PRIMARY KEY, v text);
});

# Each DELETE runs on f and h in one statement: with one snapshot each, a
# row inserted by a transaction that commits between the two could be
# deleted from h but not from f, which READ COMMITTED allows (a CI run
# failed that way).  Upserts wait for each other and need no such care.
my $script = $node->basedir . '/load.sql';
PostgreSQL::Test::Utils::append_to_file($script, q{
\set k random(1, 20000)
\set j random(1, 5000)
BEGIN;
INSERT INTO f VALUES (:k, 1, repeat('x', 100)) ON CONFLICT (k) DO UPDATE SET n = f.n + 1, t = f.t || '';
INSERT INTO h VALUES (:k, 1, repeat('x', 100)) ON CONFLICT (k) DO UPDATE SET n = h.n + 1, t = h.t || '';
INSERT INTO g VALUES (:j, md5(:j::text)) ON CONFLICT (k) DO UPDATE SET v = md5(g.v);
INSERT INTO gh VALUES (:j, md5(:j::text)) ON CONFLICT (k) DO UPDATE SET v = md5(gh.v);
WITH d AS (DELETE FROM f WHERE k = :j * 4) DELETE FROM h WHERE k = :j * 4;
COMMIT;
});

my $bindir = $node->config_data('--bindir');
my ($bout, $berr) = ('', '');
my $bench = IPC::Run::start(
	[ "$bindir/pgbench", '-n', '-c', '3', '-T', '25', '--max-tries=50', '-f', $script, '-h', $node->host,
	  '-p', $node->port, 'postgres' ],
	'>', \$bout, '2>', \$berr);

my ($deleted, $rounds, $attached) = (0, 0, 0);
my $end = time + 22;
while (time < $end)
{
	my $ck = $node->safe_psql('postgres', 'SELECT forst.checkpoint()');
	my $gc = $node->safe_psql('postgres', 'SET forst.gc_grace = 1; SELECT objects_deleted FROM forst.gc()');
	$deleted += $gc;
	$rounds++;
	if ($rounds % 4 == 0)
	{
		$node->safe_psql('postgres', "SELECT forst.attach('g', $ck, as_table => 'g_$rounds')");
		$attached++;
	}
	select(undef, undef, undef, 0.3);
}
$bench->finish;
like($bout, qr/number of transactions actually processed: [1-9]/, 'the load ran');
ok($rounds >= 5, "$rounds rounds of checkpoint + gc during the load");
ok($deleted > 0, "gc deleted $deleted objects meanwhile");

my $q = q{SELECT count(*) || ':' || coalesce(md5(string_agg(%s, ',' ORDER BY k)), '') FROM %s};
sub twins
{
	my ($what) = @_;
	my $same = is($node->safe_psql('postgres', sprintf($q, "k || '/' || n || '/' || t", 'f')),
		$node->safe_psql('postgres', sprintf($q, "k || '/' || n || '/' || t", 'h')), "f equals its heap twin $what");
	diag_differences('f', 'h') unless $same;
	$same = is($node->safe_psql('postgres', sprintf($q, "k || '/' || v", 'g')),
		$node->safe_psql('postgres', sprintf($q, "k || '/' || v", 'gh')), "g equals its heap twin $what");
	diag_differences('g', 'gh') unless $same;
}

# which rows differ, and the forst table's versions of their keys (for the log)
sub diag_differences
{
	my ($ft, $ht) = @_;
	diag($node->safe_psql('postgres', qq{
SELECT 'dups ' || (SELECT count(*) - count(DISTINCT k) FROM $ft);
SELECT coalesce(a.k, b.k) AS k, a.ctid AS forst_ctid, row(a.*)::text AS forst_row, row(b.*)::text AS heap_row
  FROM $ft a FULL JOIN $ht b ON a.k = b.k AND row(a.*)::text = row(b.*)::text
 WHERE a.k IS NULL OR b.k IS NULL ORDER BY 1 LIMIT 20;
SELECT * FROM forst.table_files('$ft');}));
}
twins('after the load');

# the clones still read (their pins kept the checkpoints' files)
my $clones_ok = 1;
for my $r (grep { $_ % 4 == 0 } 1 .. $rounds)
{
	my ($ret, $o, $e) = $node->psql('postgres', "SELECT count(*) FROM g_$r");
	$clones_ok = 0 if $ret != 0;
	diag("g_$r: $e") if $ret != 0;
}
ok($clones_ok, "all $attached clones read after gc");

# one more gc after the load, then a restart: nothing needed is gone
$node->safe_psql('postgres', 'SET forst.gc_grace = 0; SELECT forst.gc()');
twins('after a final gc');
$node->restart;
twins('after a restart');
my $last = $node->safe_psql('postgres', 'SELECT forst.checkpoint()');
$node->safe_psql('postgres', "SELECT forst.attach('f', $last, as_table => 'f_last')");
is($node->safe_psql('postgres', sprintf($q, "k || '/' || n || '/' || t", 'f_last')),
	$node->safe_psql('postgres', sprintf($q, "k || '/' || n || '/' || t", 'h')),
	'a checkpoint after it all restores f as it is');

# A table dropped between gc's listing and its check of the table, after a
# flush published a manifest and a file under it that the listing missed:
# gc lists the dead table again and takes all of it, so no manifest is
# left naming files it deleted.  In a database of its own, where gc sees
# no other table of its database.  forst.debug_gc_lock makes gc wait after
# its listing for an advisory lock that a session here holds meanwhile.
$node->safe_psql('postgres', 'CREATE DATABASE gcrace');
$node->safe_psql('gcrace', q{
CREATE EXTENSION forst;
CREATE TABLE r (k bigint PRIMARY KEY, v text) USING forst;
INSERT INTO r SELECT g, repeat('r', 200) FROM generate_series(1, 20000) g;
});
my $v0 = wait_manifest('gcrace', 'r', 0);
my ($lin, $lout, $lerr) = ('', '', '');
my $holder = IPC::Run::start(
	[ "$bindir/psql", '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('gcrace') ],
	'<', \$lin, '>', \$lout, '2>', \$lerr);
$lin .= "SELECT 'held', pg_advisory_lock(4242);\n";
$holder->pump until $lout =~ /^held\|/m;
my ($gout, $gerr) = ('', '');
my $gc_run = IPC::Run::start(
	[ "$bindir/psql", '-XAtq', '-d', $node->connstr('gcrace'), '-c',
	  'SET forst.debug_gc_lock = 4242; SET forst.gc_grace = 0;'
	  . " SELECT dead_tables || ' ' || objects_deleted FROM forst.gc()" ],
	'>', \$gout, '2>', \$gerr);
$node->poll_query_until('gcrace',
	q{SELECT count(*) = 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242 AND NOT granted})
  or die "gc did not wait after its listing: $gerr";
$node->safe_psql('gcrace',
	q{INSERT INTO r SELECT g, repeat('s', 200) FROM generate_series(20001, 40000) g});
my $v1 = wait_manifest('gcrace', 'r', $v0);
$node->safe_psql('gcrace', 'DROP TABLE r');
$lin .= "SELECT 'freed', pg_advisory_unlock(4242);\n\\q\n";
$holder->finish;
$gc_run->finish;
like($gout, qr/^1 [1-9]\d*$/, "gc that raced the drop collected the dead table (got '$gout' $gerr)");
is($node->safe_psql('gcrace', q{SELECT dead_tables || ' ' || objects_deleted FROM forst.gc()}),
	'0 0', "nothing of the dropped table is left for the next gc (manifest $v0 listed, $v1 published after)");
$node->safe_psql('postgres', 'DROP DATABASE gcrace');

ok(!$node->log_contains('TRAP|terminated by signal|could not open|does not exist'),
	'no crash, no missing object in the log');

# The table's newest manifest version once it is above $after and no
# flush of it is pending (the memtables flushed).
sub wait_manifest
{
	my ($db, $table, $after) = @_;
	$node->poll_query_until($db, qq{SELECT manifest_version > $after FROM forst.tables WHERE "table" = '$table'::regclass})
	  or die "no manifest of $table above $after";
	return $node->safe_psql($db, qq{SELECT manifest_version FROM forst.tables WHERE "table" = '$table'::regclass});
}

done_testing();
