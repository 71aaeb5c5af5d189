# Memtable slabs that the flush retired are reused as soon as no backend
# can hold pointers into them: an idle transaction does not hold writers
# back, while an open cursor keeps the slabs it reads (and reads right).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('pins');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
forst.memtable_size = '1MB'
forst.memtable_memory = '4MB'
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE f (k int PRIMARY KEY, v text) USING forst;
INSERT INTO f SELECT g, repeat('a', 200) FROM generate_series(1, 5000) g;
});

# a session that keeps a transaction open, idle, after reading f
my ($in, $out, $err) = ('', '', '');
my $idle = IPC::Run::start(
	[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres') ],
	'<', \$in, '>', \$out, '2>', \$err);
$in .= "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM f;\n";
$idle->pump until $out =~ /^5000$/m;

# ~25 MB of writes through a 4 MB pool: they must not wait for the idle one
my $t0 = time;
$node->safe_psql('postgres',
	q{INSERT INTO f SELECT g, repeat('b', 200) FROM generate_series(5001, 105000) g},
	timeout => 120);
ok(time - $t0 < 60, 'writes more than the pool holds while a transaction idles');
is($node->safe_psql('postgres', 'SELECT count(*) FROM f'), '105000', 'all rows are there');

# the idle transaction still sees its snapshot, through SST files
$out = '';
$in .= "SELECT count(*), min(k), max(k) FROM f; COMMIT;\n";
$idle->pump until $out =~ /\|/;
like($out, qr/^5000\|1\|5000$/m, 'the idle transaction reads its snapshot afterwards');
$idle->finish;

# an open cursor keeps its slabs: a writer meanwhile waits, the cursor
# reads every row right, and the writer finishes once the cursor is closed
$node->safe_psql('postgres', q{
CREATE TABLE c (k int PRIMARY KEY, v text) USING forst;
INSERT INTO c SELECT g, 'c' || g FROM generate_series(1, 3000) g;
});
($in, $out, $err) = ('', '', '');
my $cur = IPC::Run::start(
	[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres') ],
	'<', \$in, '>', \$out, '2>', \$err);
$in .= "BEGIN; DECLARE cc CURSOR FOR SELECT k, v FROM c ORDER BY k; FETCH 10 FROM cc;\n";
$cur->pump until $out =~ /^10\|c10$/m;

my ($wout, $werr) = ('', '');
my $writer = IPC::Run::start(
	[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-c',
	  q{INSERT INTO f SELECT g, repeat('d', 200) FROM generate_series(200001, 300000) g; SELECT 'written'} ],
	'>', \$wout, '2>', \$werr);
sleep 3;
$out = '';
$in .= "FETCH ALL FROM cc; SELECT 'fetched'; CLOSE cc; COMMIT;\n";
$cur->pump until $out =~ /^fetched$/m;
$cur->finish;
my ($n, $sum, $bad) = (0, 0, 0);
for my $line (split /\n/, $out)
{
	next unless $line =~ /^(\d+)\|(.*)$/;
	$n++;
	$sum += $1;
	$bad++ if $2 ne "c$1";
}
# rows 11..3000, each with its own value
is("$n $sum $bad", '2990 4501445 0', 'the cursor reads every remaining row while writes go on');
$writer->finish;
like($wout, qr/written/, 'the writer finished after the cursor closed') or diag($werr);
is($node->safe_psql('postgres', 'SELECT count(*) FROM f'), '205000', 'and wrote every row');

$node->stop;
done_testing();
