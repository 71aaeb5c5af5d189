# A statement's memory does not grow with the rows it reads or writes.
# The executor begins and ends an index scan per inserted row to check ON
# CONFLICT arbiters, and fetches rows by TID per updated row, all in the
# statement's memory context: the key index's scan state and every SST row
# version fetched used to stay there until the statement ended (an upsert
# of 600,000 conflicting rows peaked at 890 MB).  Each statement here runs
# in a backend whose peak resident size (VmHWM) is read from /proc, next to
# the same statement on a heap table.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('stmtmem');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
wal_level = replica
max_wal_senders = 0
shared_buffers = 16MB
forst.memtable_size = '1MB'
forst.memtable_memory = '16MB'
forst.shared_block_cache_size = 0
});
$node->append_conf('postgresql.conf', slurp_file($ENV{FORST_TAP_EXTRA_CONF}))
  if $ENV{FORST_TAP_EXTRA_CONF};
$node->start;

sub sql { return $node->safe_psql('postgres', $_[0]); }

my $rows = 300000;
sql(qq{
CREATE EXTENSION forst;
CREATE TABLE f (k int PRIMARY KEY, v int NOT NULL) USING forst;
CREATE TABLE h (k int PRIMARY KEY, v int NOT NULL);
INSERT INTO f SELECT g, 0 FROM generate_series(1, $rows) g;
INSERT INTO h SELECT g, 0 FROM generate_series(1, $rows) g;
});
# most forst rows are in SST files (their versions are copied when fetched)
$node->poll_query_until('postgres',
	"SELECT memtable_entries < 50000 AND sst_files > 0 FROM forst.table_info('f')")
  or die 'the rows were not flushed';

# Peak resident kB of a backend that runs $stmt.
sub peak_kb
{
	my ($stmt) = @_;
	my ($in, $out, $err) = ('', '', '');
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-At', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres') ],
		'<', \$in, '>', \$out, '2>', \$err);
	$in .= "SELECT pg_backend_pid();\n";
	$h->pump until $out =~ /^(\d+)$/m;
	my $pid = $1;
	$in .= "$stmt;\nSELECT 'done';\n";
	$h->pump until $out =~ /^done$/m;
	open(my $fh, '<', "/proc/$pid/status") or die "no /proc/$pid/status";
	my ($kb) = map { /^VmHWM:\s+(\d+)/ ? $1 : () } <$fh>;
	close $fh;
	$in .= "\\q\n";
	$h->finish;
	die "statement failed: $err" if $err =~ /ERROR/;
	return $kb;
}

for my $case (
	[ 'ON CONFLICT DO NOTHING, every row conflicts',
		'INSERT INTO %s SELECT g, 1 FROM generate_series(1, %d) g ON CONFLICT DO NOTHING' ],
	[ 'ON CONFLICT DO UPDATE, every row conflicts',
		'INSERT INTO %s AS t SELECT g, 1 FROM generate_series(1, %d) g ON CONFLICT (k) DO UPDATE SET v = t.v + 1' ],
	[ 'UPDATE of every row',
		'UPDATE %s SET v = v + 1 WHERE k <= %d' ])
{
	my ($name, $fmt) = @$case;
	my $fkb = peak_kb(sprintf($fmt, 'f', $rows));
	my $hkb = peak_kb(sprintf($fmt, 'h', $rows));
	note("$name: forst $fkb kB, heap $hkb kB");
	# the heap statement's peak plus the forst pool (16 MB) and 32 MB slack;
	# the leaks were 300+ bytes a row (90+ MB here)
	cmp_ok($fkb, '<', $hkb + 48 * 1024, "$name: forst backend peak within heap's + 48 MB")
	  or diag("forst $fkb kB, heap $hkb kB");
}
is(sql('SELECT sum(v) FROM f'), sql('SELECT sum(v) FROM h'), 'both tables hold the same values');

done_testing();
