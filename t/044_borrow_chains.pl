# Files borrowed through a chain of servers stay while a table reads them.
#
# Three servers share one store.  A table on s0 is attached (borrowing its
# files) on s1, and that table is attached again on s2 from a checkpoint of
# s1: the table on s2 reads files that live under s0's table, through s1's
# checkpoint.  Then the tables on s0 and s1 are dropped (as a rescale drops
# the shards it moved) and every server takes more checkpoints than it
# retains and collects its garbage with no grace, in the order that deletes
# the most (s1, whose dropped table held the pin on s0's checkpoint, before
# s0).  The table on s2 must still read every row, s1 must keep its pin on
# s0 while a checkpoint it retains lists s0's files, and once the table on
# s2 is dropped too, the pins go and every object of the chain is
# collected: nothing leaks.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ForstStore;

my $store = ForstStore->new;
my $settings = qq{
shared_buffers = '16MB'
forst.memtable_size = '1MB'
forst.memtable_memory = '8MB'
forst.checkpoint_interval = 0
forst.compaction_workers = 0
};

my ($s0, $s1, $s2) = map { $store->server($_, $settings) } qw(s0 s1 s2);
my %cluster = map { $_->name => $_->safe_psql('postgres', 'SELECT forst.cluster_id()') } ($s0, $s1, $s2);

# The table's store prefix, "<cluster>/tables/<db oid>.<relfilenode>".
sub table_prefix
{
	my ($n, $t) = @_;
	return $cluster{ $n->name } . '/tables/'
	  . $n->safe_psql('postgres',
		"SELECT d.oid || '.' || pg_relation_filenode('$t') FROM pg_database d WHERE d.datname = current_database()");
}

my $rows = 'SELECT count(*), sum(k), md5(string_agg(v, \',\' ORDER BY k)) FROM %s';

# s0: the table, its rows in two files (two flushes)
$s0->safe_psql('postgres', q{
CREATE TABLE t0 (k int PRIMARY KEY, v text) USING forst;
INSERT INTO t0 SELECT g, md5(g::text) FROM generate_series(1, 3000) g;
SELECT forst.checkpoint();
INSERT INTO t0 SELECT g, 'second ' || g FROM generate_series(2001, 5000) g
  ON CONFLICT (k) DO UPDATE SET v = excluded.v;
});
my $expect = $s0->safe_psql('postgres', sprintf($rows, 't0'));
my $p0 = table_prefix($s0, 't0');
my $ck0 = $s0->safe_psql('postgres', 'SELECT forst.checkpoint()');
my @sst0 = grep { m{/sst/} } $store->keys($p0);
cmp_ok(scalar(@sst0), '>=', 2, 's0 wrote the table\'s rows in ' . scalar(@sst0) . ' SST files');

# s1 borrows them; s2 borrows them again, through a checkpoint of s1
$s1->safe_psql('postgres',
	"SELECT forst.attach('public.t0', $ck0, cluster => '$cluster{s0}', as_table => 't1')");
my $ck1 = $s1->safe_psql('postgres', 'SELECT forst.checkpoint()');
$s2->safe_psql('postgres',
	"SELECT forst.attach('public.t1', $ck1, cluster => '$cluster{s1}', as_table => 't2')");
is($s2->safe_psql('postgres', sprintf($rows, 't2')), $expect, 's2 reads the rows of s0 through s1');
is($s2->safe_psql('postgres', q{SELECT count(*) FILTER (WHERE borrowed), count(*) FROM forst.files WHERE "table" = 't2'::regclass}),
	scalar(@sst0) . '|' . scalar(@sst0), 'every file of s2\'s table is one of s0\'s, borrowed');

# the tables the chain went through are dropped; checkpoints beyond
# retention (3) and gc with no grace, s1 before s0, twice
my $p1 = table_prefix($s1, 't1');
$s0->safe_psql('postgres', 'DROP TABLE t0');
$s1->safe_psql('postgres', 'DROP TABLE t1');
my $gc = q{SET forst.gc_grace = 0; SELECT objects_deleted || ' ' || pins_dropped FROM forst.gc()};
for (1 .. 2)
{
	for my $n ($s2, $s1, $s0)
	{
		$n->safe_psql('postgres', 'SELECT forst.checkpoint()') for 1 .. 4;
		$n->safe_psql('postgres', $gc);
	}
}
is(join(' ', grep { m{/sst/} } $store->keys($p0)), join(' ', @sst0),
	's0 keeps every SST file of its dropped table that s2 reads through s1');
cmp_ok(scalar(grep { m{^\Q$cluster{s0}\E/pins/\Q$cluster{s1}\E\.} } $store->keys("$cluster{s0}/pins")), '==', 1,
	's1 keeps its pin on s0\'s checkpoint while a checkpoint it retains lists s0\'s files');
is($s2->safe_psql('postgres', sprintf($rows, 't2')), $expect,
	'after checkpoints beyond retention and gc with no grace on every server, s2 reads every row');
$s2->restart;
is($s2->safe_psql('postgres', sprintf($rows, 't2')), $expect, '... and so after a restart (no cached file)');

# the end of the chain dropped: its pins go, then s1's checkpoint of t1,
# then s1's pin on s0, then s0's files; nothing of the chain is left
$s2->safe_psql('postgres', 'DROP TABLE t2');
for (1 .. 2)
{
	for my $n ($s2, $s1, $s0)
	{
		$n->safe_psql('postgres', 'SELECT forst.checkpoint()') for 1 .. 4;
		$n->safe_psql('postgres', $gc);
	}
}
is(join(' ', $store->keys($p0), $store->keys($p1)), '',
	'once no table reads them, the objects of s0\'s and s1\'s dropped tables are collected');
is(join(' ', $store->keys("$cluster{s0}/pins"), $store->keys("$cluster{s1}/pins")), '',
	'and no pin is left');

$_->stop for ($s0, $s1, $s2);
done_testing();
