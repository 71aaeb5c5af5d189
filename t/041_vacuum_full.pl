# VACUUM FULL of a forst table writes it again under a new relfilenode,
# as files only (tableam/vacuum.c): the primary answers as its heap twin
# after it and after a crash that follows it; a standby that reads the
# primary's store follows it and, promoted, takes writes; a standby that
# cannot read that store refuses reads of the table (it has none of its
# rows) instead of answering without them.  DROP INDEX CONCURRENTLY
# replays there too.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $store = PostgreSQL::Test::Utils::tempdir('store');
my $primary = PostgreSQL::Test::Cluster->new('vf_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
forst.remote_dir = 'file://$store'
forst.memtable_size = '1MB'
});
$primary->append_conf('postgresql.conf', slurp_file($ENV{FORST_TAP_EXTRA_CONF}))
  if $ENV{FORST_TAP_EXTRA_CONF};
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE f (k int PRIMARY KEY, a int NOT NULL, v text) USING forst;
CREATE TABLE h (k int PRIMARY KEY, a int NOT NULL, v text);
CREATE INDEX f_a ON f (a);
CREATE INDEX h_a ON h (a);
CREATE INDEX f_v ON f (v, k);
CREATE INDEX h_v ON h (v, k);
});
$primary->backup('b');

# one standby on the primary's store, one on its own copy of it
my $shared = PostgreSQL::Test::Cluster->new('vf_shared');
$shared->init_from_backup($primary, 'b', has_streaming => 1);
$shared->start;
my $own = PostgreSQL::Test::Cluster->new('vf_own');
$own->init_from_backup($primary, 'b', has_streaming => 1);
$own->append_conf('postgresql.conf', "forst.remote_dir = ''");
$own->start;

$primary->safe_psql('postgres', q{
INSERT INTO f SELECT g, g % 50, repeat('x', 100) FROM generate_series(1, 30000) g;
INSERT INTO h SELECT g, g % 50, repeat('x', 100) FROM generate_series(1, 30000) g;
UPDATE f SET v = 'y', a = a + 1 WHERE k % 3 = 0;
UPDATE h SET v = 'y', a = a + 1 WHERE k % 3 = 0;
DELETE FROM f WHERE k % 4 = 0;
DELETE FROM h WHERE k % 4 = 0;
});

my @queries = (
	'SELECT k, a, v FROM @T ORDER BY k',
	'SELECT k FROM @T WHERE a = 7 ORDER BY k',
	'SELECT count(*), sum(k) FROM @T WHERE a BETWEEN 10 AND 20',
	"SELECT k FROM \@T WHERE v = 'y' AND k < 3000 ORDER BY k");

sub answers
{
	my ($node, $t) = @_;
	my @out;
	for my $q (@queries)
	{
		(my $x = $q) =~ s/\@T/$t/g;
		push @out,
		  $node->safe_psql('postgres',
			"SET enable_seqscan = off; "
			  . "SELECT count(*) || ':' || md5(coalesce(string_agg(q::text, ','), '')) FROM ($x) q");
	}
	return join("\n", @out);
}

my $heap = answers($primary, 'h');
is(answers($primary, 'f'), $heap, 'before: forst answers as heap');
my $filenode = $primary->safe_psql('postgres', "SELECT pg_relation_filenode('f')");
$primary->safe_psql('postgres', 'VACUUM FULL f');
$primary->safe_psql('postgres', 'VACUUM FULL h');
isnt($primary->safe_psql('postgres', "SELECT pg_relation_filenode('f')"), $filenode,
	'VACUUM FULL gave the table a new relfilenode');
is($primary->safe_psql('postgres', "SELECT sum(tombstones) FROM forst.table_files('f')"),
	'0', 'its files hold no tombstones');
is(answers($primary, 'f'), $heap, 'after VACUUM FULL the table and its index answer as before');

# a crash right after it: the new relfilenode's files and the rebuilt
# index's entries come back (the manifest and the entries' WAL records)
$primary->stop('immediate');
$primary->start;
is(answers($primary, 'f'), $heap, 'and after a crash that follows it');

# the standby on the same store follows
$primary->wait_for_catchup($shared);
is(answers($shared, 'f'), $heap, 'a standby on the primary\'s store answers as the primary');

# the standby on its own store has none of the rewritten rows: it refuses
$primary->wait_for_catchup($own);
is(answers($own, 'h'), $heap, 'the other standby answers for the heap table');
my ($rc, $o, $e) = $own->psql('postgres', 'SELECT count(*) FROM f');
isnt($rc, 0, 'the other standby refuses to read the forst table');
like($e, qr/this standby cannot read version \d+ of table .*whose rows are only in the primary's object store/,
	'and says why');
like($e, qr/HINT:  Set forst.remote_dir on the standby to the primary's object store/, 'and what to do');
ok($own->log_contains('cannot read manifest version'), 'it warned when it replayed the version');

# DROP INDEX CONCURRENTLY: its tombstones replay on the standby, which
# answers through the index that stays
like(
	$primary->safe_psql('postgres',
		"SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT k FROM f WHERE v = 'y' AND k < 3000"),
	qr/Index (Only )?Scan using f_v/, 'the query reads the index before the drop');
$primary->safe_psql('postgres', 'DROP INDEX CONCURRENTLY f_v');
$primary->safe_psql('postgres', 'DROP INDEX CONCURRENTLY h_v');
is(answers($primary, 'f'), $heap, 'after DROP INDEX CONCURRENTLY');
$primary->wait_for_catchup($shared);
is($shared->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname = 'f_v'"),
	'0', 'the standby replayed the drop');
is(answers($shared, 'f'), $heap, 'and answers as the primary');

# writes after it, replayed; the promoted standby takes writes
$primary->safe_psql('postgres',
	"UPDATE f SET a = 7 WHERE k BETWEEN 100 AND 120; UPDATE h SET a = 7 WHERE k BETWEEN 100 AND 120");
$heap = answers($primary, 'h');
is(answers($primary, 'f'), $heap, 'writes after it');
$primary->wait_for_catchup($shared);
is(answers($shared, 'f'), $heap, 'replayed on the standby');
$primary->stop;
$shared->promote;
$shared->safe_psql('postgres',
	"INSERT INTO f VALUES (4, 7, 'p'); INSERT INTO h VALUES (4, 7, 'p'); DELETE FROM f WHERE k = 5; DELETE FROM h WHERE k = 5");
is(answers($shared, 'f'), answers($shared, 'h'), 'the promoted standby takes writes');
ok(!$shared->log_contains('TRAP|terminated by signal') && !$own->log_contains('TRAP|terminated by signal'),
	'no crash');

$own->stop;
$shared->stop;
done_testing();
