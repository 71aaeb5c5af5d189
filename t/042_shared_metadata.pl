# The shared metadata store (forst.shared_metadata_memory): backends that
# read the same SST files share one copy of each file's bloom filter, block
# index and index fences in shared memory instead of keeping one each.
# Checked with real sessions:
#  - a second session finds what the first one put, and pins it;
#  - the metadata of files that compaction replaced leaves the store once
#    no session pins it, and a session's exit gives back its pins;
#  - a store too small for everything refuses the rest (the readers keep
#    their own copies) and, once the sessions that pinned the others are
#    gone, evicts unpinned entries to make room;
# and every answer equals a heap twin's throughout.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('metadata');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
wal_level = replica
max_wal_senders = 0
forst.memtable_size = '1MB'
forst.memtable_memory = '4MB'
forst.checkpoint_interval = 0
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE s (k int PRIMARY KEY, v text) USING forst;
CREATE TABLE sh (k int PRIMARY KEY, v text);
INSERT INTO s SELECT i, md5(i::text) FROM generate_series(1, 30000) i;
INSERT INTO sh SELECT i, md5(i::text) FROM generate_series(1, 30000) i;
SELECT forst.checkpoint();
});
settle('s');

# A session that stays open: statements in, lines out.
sub session
{
	my %s = (in => '', out => '', err => '');
	$s{h} = IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres') ],
		'<', \$s{in}, '>', \$s{out}, '2>', \$s{err});
	return \%s;
}

# Runs sql in session s and returns the line tagged $tag (its fields).
sub ask
{
	my ($s, $tag, $sql) = @_;
	$s->{out} = '';
	$s->{in} .= "$sql\n";
	$s->{h}->pump until $s->{out} =~ /^\Q$tag\E\|.*$/m || $s->{err} ne '';
	die "session failed: $s->{err}" if $s->{err} ne '';
	my ($line) = $s->{out} =~ /^\Q$tag\E\|(.*)$/m;
	return split /\|/, $line;
}

# Point reads of every 7th key of the table and its twin (a lookup each),
# compared: 't' when they agree.
sub lookups
{
	my ($s, $tag, $t, $n) = @_;
	my ($same) = ask($s, $tag, qq{
SELECT '$tag', (SELECT sum(length((SELECT v FROM $t WHERE k = g))) FROM generate_series(1, $n, 7) g)
           IS NOT DISTINCT FROM
           (SELECT sum(length((SELECT v FROM ${t}h WHERE k = g))) FROM generate_series(1, $n, 7) g);});
	return $same;
}

# Waits for the table's files to stay the same for 2 s (compactions done).
sub settle
{
	my ($t) = @_;
	my $prev = '';
	for (1 .. 60)
	{
		my $n = $node->safe_psql('postgres',
			"SELECT string_agg(file_id::text, ',' ORDER BY file_id) FROM forst.table_files('$t')");
		return $n if $n eq $prev;
		$prev = $n;
		sleep 2;
	}
	return $prev;
}

sub store
{
	my %st;
	@st{qw(capacity bytes filter_bytes index_bytes entries pinned hits puts refused evictions)} = split /\|/,
	  $node->safe_psql('postgres',
		'SELECT capacity, bytes_used, filter_bytes, index_bytes, entries, pinned, hits, puts, refused, evictions'
		  . ' FROM forst.shared_metadata()');
	return \%st;
}

my $files = $node->safe_psql('postgres', q{SELECT count(*) FROM forst.table_files('s')});
cmp_ok($files, '>=', 1, "s has $files SST files");

# Two sessions read the same files: one copy of each file's filter, index
# and fences, pinned by both.
my $s1 = session();
my $s2 = session();
is(lookups($s1, 'l1', 's', 30000), 't', 'the first session reads as the heap twin does');
my $st = store();
cmp_ok($st->{entries}, '>=', 2 * $files, "the first session put the filter and index of each file it read ($st->{entries})");
cmp_ok($st->{entries}, '<=', 3 * $files, 'and their fences, nothing else');
cmp_ok($st->{filter_bytes}, '>', 0, "filters: $st->{filter_bytes} bytes");
cmp_ok($st->{index_bytes}, '>', 0, "indexes and fences: $st->{index_bytes} bytes");
is($st->{puts}, $st->{entries}, 'each was put once');
my $entries1 = $st->{entries};
is(lookups($s2, 'l2', 's', 30000), 't', 'the second session reads as the heap twin does');
my ($pins2) = ask($s2, 'p2', q{SELECT 'p2', session_pins FROM forst.shared_metadata();});
$st = store();
is($st->{entries}, $entries1, 'the second session added no copy');
cmp_ok($st->{hits}, '>=', $entries1, 'it found everything the first one put');
is($pins2, $entries1, 'and pins each of them');
is($st->{pinned}, $entries1, 'every entry in the store is pinned');

# New files until compactions have replaced every file the sessions read;
# at their next reads the sessions close the old readers, and the old
# metadata leaves the store with its last pin.
my $old = $node->safe_psql('postgres', q{SELECT string_agg(file_id::text, ',') FROM forst.table_files('s')});
my $gone = 0;
for my $round (1 .. 40)
{
	$node->safe_psql('postgres', qq{
INSERT INTO s SELECT i, md5(i::text) FROM generate_series(30000 + $round * 3000, 30000 + $round * 3000 + 2999) i;
INSERT INTO sh SELECT i, md5(i::text) FROM generate_series(30000 + $round * 3000, 30000 + $round * 3000 + 2999) i;
SELECT forst.checkpoint();});
	if ($node->safe_psql('postgres', "SELECT count(*) FROM forst.table_files('s') WHERE file_id IN ($old)") == 0)
	{
		$gone = 1;
		last;
	}
	sleep 1;
}
ok($gone, 'compactions replaced every file the sessions had read');
settle('s');
my $max = 30000 + 41 * 3000;
is(lookups($s1, 'l3', 's', $max), 't', 'the first session reads the new files as the heap twin does');
is(lookups($s2, 'l4', 's', $max), 't', 'so does the second');
my $now = $node->safe_psql('postgres', q{SELECT count(*) FROM forst.table_files('s')});
$st = store();
cmp_ok($st->{entries}, '<=', 3 * $now,
	"the store holds nothing of a replaced file ($st->{entries} entries, $now files)");

# A session's exit gives its pins back.
for my $s ($s1, $s2)
{
	$s->{in} .= "\\q\n";
	$s->{h}->finish;
}
ok($node->poll_query_until('postgres', 'SELECT pinned = 0 FROM forst.shared_metadata()'),
	'no filter is pinned once the sessions ended');

# A store too small for everything: 40 tables of 10,000 rows, a filter of
# about 12 kB and an index of a few kB each, in 256 kB.
$node->append_conf('postgresql.conf', "forst.shared_metadata_memory = '256kB'");
$node->restart;
my $ntab = 40;
for my $i (1 .. $ntab)
{
	$node->safe_psql('postgres', qq{
CREATE TABLE m$i (k int PRIMARY KEY, v text) USING forst;
INSERT INTO m$i SELECT i, md5(i::text) FROM generate_series(1, 10000) i;});
}
$node->safe_psql('postgres', 'SELECT forst.checkpoint()');
my $probe = join(' + ', map { "(SELECT count(*) FROM m$_ WHERE k = $_ * 13)" } 1 .. $ntab);
my $s3 = session();
my ($found3) = ask($s3, 'm3', "SELECT 'm3', $probe;");
is($found3, $ntab, "a session reads a row of each of $ntab tables");
$st = store();
cmp_ok($st->{refused}, '>', 0, "the full store refused entries ($st->{refused}; $st->{entries} taken)");
cmp_ok($st->{entries}, '>', 0, 'it took some');
cmp_ok($st->{bytes}, '<=', $st->{capacity}, 'the store stays within its size');
is($st->{pinned}, $st->{entries}, 'every entry in it is pinned by the session');
my $evicted3 = $st->{evictions};
$s3->{in} .= "\\q\n";
$s3->{h}->finish;
ok($node->poll_query_until('postgres', 'SELECT pinned = 0 FROM forst.shared_metadata()'),
	'the session ended: its entries are unpinned');
my $s4 = session();
my $rprobe = join(' + ', map { "(SELECT count(*) FROM m$_ WHERE k = $_ * 17)" } reverse 1 .. $ntab);
my ($found4) = ask($s4, 'm4', "SELECT 'm4', $rprobe;");
is($found4, $ntab, "another session reads the $ntab tables in the other order");
$st = store();
cmp_ok($st->{evictions}, '>', $evicted3,
	'unpinned entries made room for its own (' . ($st->{evictions} - $evicted3) . ' evicted)');
cmp_ok($st->{bytes}, '<=', $st->{capacity}, 'the store still stays within its size');
$s4->{in} .= "\\q\n";
$s4->{h}->finish;

ok(!$node->log_contains('TRAP|terminated by signal|PANIC|WARNING:  forst'),
	'no crash, no warning in the log');

done_testing();
