# Every table, always: with more forst tables than any batch of the
# background workers (1,000 here; the flush, compaction and checkpoint
# workers used to list at most 64, 256 or 1,024 tables of the registry,
# in hash order, and never saw the others), tables created last and in the
# middle are flushed, compacted and checkpointed like the first ones.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $ntables = 1000;
my @hot = ('t0500', 't0750', sprintf('t%04d', $ntables));

my $node = PostgreSQL::Test::Cluster->new('many');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
wal_level = replica
max_wal_senders = 0
max_locks_per_transaction = 256
forst.max_tables = 4096
forst.memtable_size = '1MB'
forst.memtable_memory = '8MB'
forst.checkpoint_interval = 0
});
$node->append_conf('postgresql.conf', slurp_file($ENV{FORST_TAP_EXTRA_CONF}))
  if $ENV{FORST_TAP_EXTRA_CONF};
$node->start;

# 1,000 tables, and each of them read once: reads and writes give a table
# its shared state, the registry the background workers go round
$node->safe_psql('postgres', qq{
CREATE EXTENSION forst;
DO \$\$
BEGIN
  FOR i IN 1 .. $ntables LOOP
    EXECUTE format('CREATE TABLE %I (k bigint PRIMARY KEY, v text) USING forst',
                   't' || lpad(i::text, 4, '0'));
  END LOOP;
END \$\$;
});
$node->safe_psql('postgres', qq{
DO \$\$
DECLARE n bigint;
BEGIN
  FOR i IN 1 .. $ntables LOOP
    EXECUTE format('SELECT count(*) FROM %I', 't' || lpad(i::text, 4, '0')) INTO n;
  END LOOP;
END \$\$;
});
ok($node->safe_psql('postgres', 'SELECT tables FROM forst.memory()') >= $ntables,
	"the $ntables tables have shared state");

# ~12 MB into each hot table, 1.5 MB a statement: a 1 MB memtable fills
# and is flushed to a level-0 file several times over
for my $r (1 .. 8)
{
	for my $t (@hot)
	{
		$node->safe_psql('postgres',
			"INSERT INTO $t SELECT $r * 100000 + g, repeat('x', 200) FROM generate_series(1, 5000) g");
	}
}
for my $t (@hot)
{
	is($node->safe_psql('postgres', "SELECT count(*) FROM $t"), '40000', "$t has its rows");
}

# Compaction merges level 0 (four files trigger it) into level 1 in every
# hot table.  Before, a table past the compaction worker's 256 kept one
# level-0 file per flush and was never compacted.
my $state = join(' UNION ALL ',
	map { "SELECT '$_' AS t, i.* FROM forst.table_info('$_'::regclass) i" } @hot);
my $settled = qq{
SELECT bool_and(sst_files > 0 AND level_files[1] < 4
                AND (SELECT sum(l) FROM unnest(level_files[2:]) l) > 0)
  FROM ($state) s};
{
	local $PostgreSQL::Test::Utils::timeout_default = 90;
	my $done = $node->poll_query_until('postgres', $settled);
	ok($done, 'level 0 of the tables created last and in the middle is compacted')
	  or diag('forst.table_info of the hot tables (level_files[1] is level 0): '
		  . $node->safe_psql('postgres',
			  "SELECT string_agg(t || ' files ' || sst_files || ' levels ' || level_files::text, '; ') FROM ($state) s")
		  . '; forst.stats compactions: '
		  . $node->safe_psql('postgres', 'SELECT compactions FROM forst.stats'));
}
ok($node->safe_psql('postgres', 'SELECT compactions FROM forst.stats') > 0,
	'forst.stats counts the compactions');

# The checkpoint worker checkpoints the database, every table in it, the
# hot ones with their files.
my $lsn = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
$node->safe_psql('postgres', q{
ALTER SYSTEM SET forst.checkpoint_interval = 1;
SELECT pg_reload_conf();
});
my $ck_query = qq{
SELECT max(id) FROM forst.checkpoints
 WHERE database = 'postgres' AND status = 'completed' AND lsn >= '$lsn'};
{
	local $PostgreSQL::Test::Utils::timeout_default = 90;
	ok($node->poll_query_until('postgres', "SELECT ($ck_query) IS NOT NULL"),
		'the checkpoint worker took a checkpoint of the database')
	  or diag('forst.checkpoints: '
		  . $node->safe_psql('postgres',
			  "SELECT string_agg(id || ' ' || status || ' ' || coalesce(error, ''), '; ') FROM forst.checkpoints"));
}
$node->safe_psql('postgres', q{
ALTER SYSTEM SET forst.checkpoint_interval = 0;
SELECT pg_reload_conf();
});
my $ck = $node->safe_psql('postgres', $ck_query);
is($node->safe_psql('postgres', "SELECT jsonb_array_length(forst.checkpoint_read($ck)->'tables')"),
	$ntables, "checkpoint $ck lists all $ntables tables");
my $names = join(', ', map { "'public.$_'" } @hot);
is($node->safe_psql('postgres', qq{
SELECT count(*) FROM jsonb_array_elements(forst.checkpoint_read($ck)->'tables') t
 WHERE t->>'name' IN ($names) AND (t->>'manifest')::bigint > 0 AND (t->>'files')::int > 0}),
	scalar(@hot), 'the checkpoint covers the hot tables with their SST files');

$node->stop;
done_testing();
