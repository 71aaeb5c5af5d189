# VACUUM keeps a forst table's relfrozenxid honest (src/am/tableam/vacuum.c),
# and flushes and compactions freeze the versions every snapshot sees.
# Before, VACUUM did nothing: relfrozenxid stayed where CREATE TABLE put
# it, held datfrozenxid back, and 2^31 transactions later the server would
# have stopped assigning xids.
#
# Checked: rows flushed with no snapshot older than them are frozen (no
# xid range in forst.files) and VACUUM moves relfrozenxid past thousands
# of later transactions, and datfrozenxid with it; rows flushed while an
# older snapshot ran keep their xids, and relfrozenxid stops exactly at the
# oldest of them; VACUUM FREEZE rewrites those files (and flushes
# memtables holding old xids), after which no xid is left and relfrozenxid
# moves on; the rows are those of a heap twin throughout, also after a
# restart, and the rewrite shows in VACUUM VERBOSE and
# pg_stat_progress_vacuum's counters.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('freeze');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
forst.memtable_size = '1MB'
forst.memtable_memory = '4MB'
forst.target_file_size = '256kB'
autovacuum = off
});
$node->start;

sub sql { return $node->safe_psql('postgres', $_[0]); }

sql(q{
CREATE EXTENSION forst;
CREATE TABLE f (k int PRIMARY KEY, v text NOT NULL) USING forst;
CREATE TABLE h (k int PRIMARY KEY, v text NOT NULL);
CREATE PROCEDURE burn(n int) LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1 .. n LOOP
		PERFORM txid_current();
		COMMIT;
	END LOOP;
END $$;
});
my $created = sql(q{SELECT relfrozenxid FROM pg_class WHERE relname = 'f'});

my $same = q{SELECT (SELECT count(*) FROM f) || ' ' ||
	(SELECT count(*) FROM (SELECT * FROM f EXCEPT SELECT * FROM h) x) || ' ' ||
	(SELECT count(*) FROM (SELECT * FROM h EXCEPT SELECT * FROM f) x)};

sub write_rows
{
	my ($lo, $hi, $tag) = @_;
	for my $t ('f', 'h')
	{
		sql(qq{INSERT INTO $t SELECT g, md5(g::text) || '$tag' FROM generate_series($lo, $hi) g
			ON CONFLICT (k) DO UPDATE SET v = excluded.v});
	}
}

# 1. rows written and flushed with no older snapshot running: frozen (as
# few as fit in a memtable: one flushed while its writer runs keeps its xid
# until compaction)
for my $r (0 .. 4)
{
	write_rows($r * 200 + 1, ($r + 1) * 200, 'a');
}
sql('SELECT forst.checkpoint()');
my $files = sql(q{SELECT count(*) FROM forst.table_files('f')});
cmp_ok($files, '>', 0, "$files files after the flush");
is(sql(q{SELECT count(*) FROM forst.table_files('f') WHERE xid_min IS NOT NULL}),
	'0', 'versions flushed with no older snapshot running are frozen');

sql('CALL burn(3000)');
sql('VACUUM f');
my $age = sql(q{SELECT age(relfrozenxid) FROM pg_class WHERE relname = 'f'});
cmp_ok($age, '<', 100, "VACUUM advanced relfrozenxid past 3000 transactions (age $age)");
isnt(sql(q{SELECT relfrozenxid FROM pg_class WHERE relname = 'f'}), $created,
	'relfrozenxid is no longer the one CREATE TABLE set');
sql('VACUUM FREEZE');
my $dbage = sql(q{SELECT age(datfrozenxid) FROM pg_database WHERE datname = 'postgres'});
cmp_ok($dbage, '<', 100, "a database-wide VACUUM FREEZE moves datfrozenxid (age $dbage)");
is(sql($same), '1000 0 0', 'rows equal the heap twin');

# 2. rows flushed while an older snapshot runs keep their xids
my $bg = $node->background_psql('postgres');
$bg->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM h;');
my $first = sql('SELECT txid_current()');
write_rows(5001, 9000, 'b');
write_rows(15001, 30000, 'c');
sql('SELECT forst.checkpoint()');
# and a table of two level-0 files, too few for any compaction to be due
sql('CREATE TABLE g (k int PRIMARY KEY, v text) USING forst');
for my $r (0 .. 1)
{
	sql(sprintf(q{INSERT INTO g SELECT i, md5(i::text) FROM generate_series(%d, %d) i},
		$r * 300 + 1, ($r + 1) * 300));
	sql('SELECT forst.checkpoint()');
}
my ($unfrozen, $xmin) = split /\|/, sql(q{SELECT count(*), min(xid_min::text::bigint) FROM forst.table_files('f') WHERE xid_min IS NOT NULL});
cmp_ok($unfrozen, '>', 0, "$unfrozen files keep xids while an older snapshot runs");
cmp_ok($xmin, '>', $first, 'the oldest of them is one of the writes');
$bg->query_safe('COMMIT');
$bg->quit;

sql('CALL burn(2000)');
sql('VACUUM f');
# compaction may freeze some of them meanwhile: relfrozenxid may pass $xmin,
# never an xid still unfrozen
my $rfx = sql(q{SELECT relfrozenxid::text::bigint FROM pg_class WHERE relname = 'f'});
my $left = sql(q{SELECT coalesce(min(xid_min::text::bigint), txid_current()) FROM forst.table_files('f')});
ok($rfx >= $xmin && $rfx <= $left,
	"VACUUM stops relfrozenxid at the oldest unfrozen xid ($xmin <= $rfx <= $left)");
cmp_ok($rfx, '<', $first + 2000, 'not at the horizon: the files hold it back');
is(sql($same), '20000 0 0', 'rows equal the heap twin');

# 3. rows in a memtable, written while an older snapshot ran
$bg = $node->background_psql('postgres');
$bg->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM h;');
my $mt_xid = sql(q{
INSERT INTO f VALUES (40001, 'memtable') RETURNING xmin});
sql(q{INSERT INTO h VALUES (40001, 'memtable')});
$bg->query_safe('COMMIT');
$bg->quit;
sql('CALL burn(2000)');
is(sql(q{SELECT memtable_entries FROM forst.table_info('f')}), '1',
	'the row is still in a memtable');
my ($rc, $out, $err) = $node->psql('postgres', 'VACUUM (VERBOSE) f');
note $err;
cmp_ok(sql(q{SELECT relfrozenxid::text::bigint FROM pg_class WHERE relname = 'f'}),
	'<=', $mt_xid, 'a plain VACUUM leaves relfrozenxid at or before the memtable row');

# 4. VACUUM FREEZE: files and memtables holding old xids are frozen
($rc, $out, $err) = $node->psql('postgres', 'VACUUM (FREEZE, VERBOSE) f');
is($rc, 0, 'VACUUM FREEZE ran');
like($err, qr/relfrozenxid \d+ \(advanced\)/, 'VACUUM VERBOSE reports the advance');
is(sql(q{SELECT count(*) FROM forst.table_files('f') WHERE xid_min IS NOT NULL}),
	'0', 'no file keeps an unfrozen xid');
is(sql(q{SELECT string_agg(level || ':' || (xid_min IS NOT NULL), ',' ORDER BY file_id) FROM forst.table_files('g')}),
	'0:true,0:true', 'two level-0 files keep their xids: nothing is due');
($rc, $out, $err) = $node->psql('postgres', 'VACUUM (FREEZE, VERBOSE) g');
my ($froze) = $err =~ /Aggressive: (\d+) compactions/;
cmp_ok($froze // 0, '>', 0, "VACUUM FREEZE rewrote them in " . ($froze // 0) . ' compactions');
is(sql(q{SELECT count(*) || ' ' || count(xid_min) FROM forst.table_files('g')}),
	'1 0', 'into one frozen file');
is(sql(q{SELECT count(*) || ' ' || count(DISTINCT v) FROM g}), '600 600', 'with every row');
is(sql(q{SELECT memtable_entries FROM forst.table_info('f')}), '0',
	'the memtable holding an old xid was flushed');
$age = sql(q{SELECT age(relfrozenxid) FROM pg_class WHERE relname = 'f'});
cmp_ok($age, '<', 100, "relfrozenxid advanced past 4000 transactions (age $age)");
cmp_ok(sql(q{SELECT relfrozenxid::text::bigint FROM pg_class WHERE relname = 'f'}),
	'>', $mt_xid, 'past the memtable row too');
is(sql($same), '20001 0 0', 'rows equal the heap twin');
is(sql(q{SELECT xmin FROM f WHERE k = 40001}), '2', 'a frozen row shows xmin 2, as heap');

# 5. after a restart
$node->restart;
is(sql($same), '20001 0 0', 'rows equal the heap twin after a restart');
sql('CALL burn(500)');
sql('VACUUM f');
$age = sql(q{SELECT age(relfrozenxid) FROM pg_class WHERE relname = 'f'});
cmp_ok($age, '<', 100, "VACUUM after a restart keeps relfrozenxid current (age $age)");

my $log = slurp_file($node->logfile);
my @bad = $log =~ /^.*(?:PANIC|TRAP|server process .* was terminated).*$/mg;
is(scalar(@bad), 0, 'no crash in the server log') or diag(join("\n", @bad));

$node->stop;
done_testing();
