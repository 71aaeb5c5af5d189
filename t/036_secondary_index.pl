# Secondary indexes survive what the table survives: a crash (their entries
# are replayed from forst's WAL records, in memtables and in flushed files),
# a streaming standby (which answers through them), promotion, pg_dump and
# pg_restore into another server, and a heap twin agrees throughout.  So do
# foreign keys that reference forst tables' keys.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('sec_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "shared_preload_libraries = 'forst'");
# small memtables: the entries are flushed to SST files as the test runs
$primary->append_conf('postgresql.conf', "forst.memtable_size = '1MB'");
$primary->start;

$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION forst;
CREATE TABLE f (k int PRIMARY KEY, a int, b text COLLATE "C", c text) USING forst;
CREATE TABLE h (k int PRIMARY KEY, a int, b text COLLATE "C", c text);
CREATE INDEX f_a ON f (a);
CREATE INDEX f_b ON f (b, a);
CREATE INDEX h_a ON h (a);
CREATE INDEX h_b ON h (b, a);
-- partial: rows enter and leave its WHERE as c changes
CREATE INDEX f_ay ON f (a) WHERE c = 'y';
CREATE INDEX h_ay ON h (a) WHERE c = 'y';
-- on an expression
CREATE INDEX f_lb ON f (upper(b));
CREATE INDEX h_lb ON h (upper(b));
CREATE TABLE fu (k int PRIMARY KEY, u int UNIQUE, v text) USING forst;
CREATE TABLE fp (k int PRIMARY KEY, v text) USING forst;
CREATE TABLE fc (id int PRIMARY KEY, k int REFERENCES fp ON DELETE CASCADE, fu_k int REFERENCES fu);
-- an orphan refused, a referenced row kept, a delete cascaded
CREATE FUNCTION fk_checks() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	BEGIN
		INSERT INTO fc VALUES (999001, 999999, NULL);
		r := 'taken';
	EXCEPTION WHEN foreign_key_violation THEN
		r := 'refused';
	END;
	BEGIN
		DELETE FROM fu WHERE k = 2;
		r := r || ' deleted';
	EXCEPTION WHEN foreign_key_violation THEN
		r := r || ' refused';
	END;
	BEGIN
		DELETE FROM fp WHERE k = 1;
		r := r || ' ' || (SELECT count(*) FROM fc WHERE k = 1);
		RAISE EXCEPTION 'undo';
	EXCEPTION WHEN raise_exception THEN
		NULL;
	END;
	RETURN r;
END $$;
});

$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('sec_standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;

# the same writes to both: rows, indexed columns changed, keys moved,
# deletes, a rollback, a subtransaction rolled back
my $writes = q{
INSERT INTO @T SELECT g, g % 50, 'b' || (g % 13), repeat('x', 200) FROM generate_series(1, 20000) g;
UPDATE @T SET a = a + 1000 WHERE k % 5 = 0;
UPDATE @T SET k = k + 100000 WHERE k % 11 = 0;
UPDATE @T SET c = 'y' WHERE k % 3 = 0;
DELETE FROM @T WHERE k % 7 = 0;
BEGIN; UPDATE @T SET a = -1 WHERE k < 100; ROLLBACK;
BEGIN; UPDATE @T SET b = 'kept' WHERE k BETWEEN 200 AND 210;
SAVEPOINT s; UPDATE @T SET b = 'gone' WHERE k BETWEEN 300 AND 310; ROLLBACK TO s; COMMIT;
};
for my $t ('f', 'h')
{
	(my $w = $writes) =~ s/\@T/$t/g;
	$primary->safe_psql('postgres', $w);
}

# a unique index: values in SST files (1 MB memtables) and in memtables
$primary->safe_psql('postgres', q{
INSERT INTO fu SELECT g, g * 2, repeat('u', 200) FROM generate_series(1, 20000) g;
UPDATE fu SET u = -u WHERE k % 10 = 0;
DELETE FROM fu WHERE k % 10 = 1;
INSERT INTO fp SELECT g, 'p' FROM generate_series(1, 1000) g;
INSERT INTO fc SELECT g, g % 1000 + 1, NULL FROM generate_series(1, 3000) g;
INSERT INTO fc VALUES (100001, NULL, 2);
});
is($primary->safe_psql('postgres', 'SELECT fk_checks()'), 'refused refused 0',
	'foreign keys referencing forst tables are checked');

# A duplicate of u = $1 is refused; a value freed by the update or the
# delete above is taken.  Returns a digest of what happened.
sub unique_checks
{
	my ($node, $newk) = @_;
	my ($rc, $out, $err) = $node->psql('postgres',
		"INSERT INTO fu VALUES ($newk, 30, 'dup')");
	my $dup = ($rc != 0 && $err =~ /duplicate key value violates unique constraint "fu_u_key"/) ? 'refused' : "not refused: $err";
	($rc, $out, $err) = $node->psql('postgres',
		"INSERT INTO fu VALUES ($newk, -40, 'dup of a moved value')");
	my $moved = ($rc != 0 && $err =~ /fu_u_key/) ? 'refused' : "not refused: $err";
	($rc, $out, $err) = $node->psql('postgres',
		"INSERT INTO fu VALUES ($newk, 20, 'freed by update'), ($newk + 1, 22, 'freed by delete')");
	my $freed = $rc == 0 ? 'taken' : "not taken: $err";
	$node->safe_psql('postgres', "DELETE FROM fu WHERE k IN ($newk, $newk + 1)");
	return "$dup $moved $freed";
}
is(unique_checks($primary, 900001), 'refused refused taken', 'unique index checks on the primary');

# What the indexes answer (index scans forced), as one digest per query;
# @T is the table.
my @queries = (
	'SELECT k, a FROM @T WHERE a = 7 ORDER BY k',
	'SELECT a FROM @T WHERE a BETWEEN 1000 AND 1010 ORDER BY a',
	'SELECT a FROM @T WHERE a > 1040 ORDER BY a DESC',
	"SELECT b, a FROM \@T WHERE b = 'b3' AND a < 20 ORDER BY b, a",
	"SELECT k FROM \@T WHERE b IN ('kept', 'gone') ORDER BY k",
	'SELECT count(*) FROM @T WHERE a = -1',
	"SELECT a, k FROM \@T WHERE c = 'y' AND a BETWEEN 10 AND 1020 ORDER BY a, k",
	"SELECT upper(b), k FROM \@T WHERE upper(b) BETWEEN 'B3' AND 'B5' ORDER BY 1, 2");

sub answers
{
	my ($node, $t) = @_;
	my @out;
	for my $q (@queries)
	{
		(my $x = $q) =~ s/\@T/$t/g;
		push @out,
		  $node->safe_psql('postgres',
			"SET enable_seqscan = off; SET enable_bitmapscan = off; "
			  . "SELECT count(*) || ':' || md5(coalesce(string_agg(q::text, ','), '')) FROM ($x) q");
	}
	return join("\n", @out);
}

my $heap = answers($primary, 'h');
is(answers($primary, 'f'), $heap, 'forst indexes answer as heap btrees');
like(
	$primary->safe_psql(
		'postgres',
		"SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT k FROM f WHERE a = 7"),
	qr/Index Scan using f_a on f/,
	'the query reads the secondary index');
like(
	$primary->safe_psql(
		'postgres',
		"SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT k FROM f WHERE c = 'y' AND a = 7"),
	qr/Index Scan using f_ay on f/,
	'the query reads the partial index');
like(
	$primary->safe_psql(
		'postgres',
		"SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT k FROM f WHERE upper(b) = 'B3'"),
	qr/Index Scan using f_lb on f/,
	'the query reads the expression index');
ok( $primary->safe_psql(
		'postgres',
		"SELECT count(*) FROM forst.table_files('f')") > 0,
	'entries and rows went to SST files');

$primary->wait_for_catchup($standby);
is(answers($standby, 'f'), $heap, 'the standby answers through the replayed entries');

# crash: the entries in memtables come back from the WAL
$primary->safe_psql(
	'postgres', q{
INSERT INTO f SELECT g, 4242, 'crash', 'z' FROM generate_series(200001, 200500) g;
INSERT INTO h SELECT g, 4242, 'crash', 'z' FROM generate_series(200001, 200500) g;
UPDATE f SET a = 4243 WHERE k BETWEEN 200001 AND 200100;
UPDATE h SET a = 4243 WHERE k BETWEEN 200001 AND 200100;
UPDATE f SET c = 'z' WHERE c = 'y' AND k < 3000;
UPDATE h SET c = 'z' WHERE c = 'y' AND k < 3000;
UPDATE f SET c = 'y' WHERE k BETWEEN 200401 AND 200500;
UPDATE h SET c = 'y' WHERE k BETWEEN 200401 AND 200500;
});
$primary->stop('immediate');
$primary->start;
push @queries, 'SELECT k FROM @T WHERE a IN (4242, 4243) ORDER BY k',
  "SELECT count(*) FROM \@T WHERE b = 'crash'";
$heap = answers($primary, 'h');
is(answers($primary, 'f'), $heap, 'after a crash the indexes answer as before it');
$primary->safe_psql('postgres', "INSERT INTO fu VALUES (900010, 777777, 'before crash')");
$primary->stop('immediate');
$primary->start;
is(unique_checks($primary, 900011), 'refused refused taken', 'unique checks after a crash');
is($primary->safe_psql('postgres', 'SELECT fk_checks()'), 'refused refused 0',
	'foreign key checks after a crash');
my ($rc_c, $out_c, $err_c) = $primary->psql('postgres', "INSERT INTO fu VALUES (900012, 777777, 'x')");
like($err_c, qr/fu_u_key/, 'a value written just before the crash is still taken');

# writes after the crash keep both in step
$primary->safe_psql('postgres',
	"UPDATE f SET a = 7 WHERE k BETWEEN 200101 AND 200120; UPDATE h SET a = 7 WHERE k BETWEEN 200101 AND 200120");
$heap = answers($primary, 'h');
is(answers($primary, 'f'), $heap, 'and after writes that follow the crash');

# the standby follows, and once promoted takes writes through its indexes
$primary->wait_for_catchup($standby);
is(answers($standby, 'f'), $heap, 'the standby followed the crash and recovery');
$standby->promote;
$standby->safe_psql('postgres',
	"DELETE FROM f WHERE a = 7; DELETE FROM h WHERE a = 7");
is(answers($standby, 'f'), answers($standby, 'h'), 'writes on the promoted standby');
is(unique_checks($standby, 900021), 'refused refused taken', 'unique checks on the promoted standby');
is($standby->safe_psql('postgres', 'SELECT fk_checks()'), 'refused refused 0',
	'foreign key checks on the promoted standby');

# pg_dump and pg_restore into another server: the indexes come back as
# forst indexes, built from the restored rows
my $other = PostgreSQL::Test::Cluster->new('sec_other');
$other->init(allows_streaming => 1);
$other->append_conf('postgresql.conf', "shared_preload_libraries = 'forst'");
$other->start;
my $dump = PostgreSQL::Test::Utils::tempdir('dump') . '/db.dump';
$standby->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $standby->connstr('postgres') ],
	'pg_dump');
$other->command_ok([ 'pg_restore', '-d', $other->connstr('postgres'), $dump ], 'pg_restore');
is( $other->safe_psql(
		'postgres',
		"SELECT string_agg(c.relname || ' ' || a.amname, ', ' ORDER BY c.relname) FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname IN ('f_a', 'f_b', 'h_a')"
	),
	'f_a forst_key, f_b forst_key, h_a btree',
	'restored indexes keep their access methods');
is(answers($other, 'f'), answers($standby, 'h'), 'restored forst indexes answer as heap btrees');
is( $other->safe_psql('postgres',
		"SELECT a.amname || ' ' || i.indisunique FROM pg_class c JOIN pg_am a ON a.oid = c.relam JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = 'fu_u_key'"),
	'forst_key true', 'the restored UNIQUE constraint is a unique forst index');
is(unique_checks($other, 900031), 'refused refused taken', 'unique checks after pg_restore');
is($other->safe_psql('postgres', 'SELECT fk_checks()'), 'refused refused 0',
	'foreign key checks after pg_restore');
is( $other->safe_psql('postgres',
		"SELECT string_agg(c.relname || ' ' || a.amname || ' ' || oa.amname, ', ' ORDER BY c.relname) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam JOIN pg_opclass o ON o.oid = i.indclass[0] JOIN pg_am oa ON oa.oid = o.opcmethod WHERE c.relname IN ('fp_pkey', 'fu_pkey')"),
	'fp_pkey forst_key btree, fu_pkey forst_key btree',
	'the restored referenced indexes are forst_key with btree classes');
is($other->safe_psql('postgres', 'SELECT count(*) FROM fc'), '3001', 'the referencing rows are restored');

$other->stop;
$standby->stop;
$primary->stop;
done_testing();
