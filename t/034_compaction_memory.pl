# A compaction's memory does not grow with the size of the files it writes.
# An output SST file used to be built whole in the compaction worker's
# memory before its upload (up to forst.target_file_size, 64 MB by default,
# and twice that while the buffer grew), which made the worker the largest
# process of a small server.  Outputs now go through a bounded buffer into
# a temporary file and are uploaded from it in pieces.  Here a table grows
# to a level-1 file of tens of MB; the compaction worker's peak resident
# size (VmHWM, from /proc) must stay below the size of that file, the rows
# must read back exactly, and no temporary file may be left behind.  The
# s3 step of scripts/test.sh runs this again with forst.remote_dir on S3,
# where the upload is one streamed, signed PUT.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('compmem');
$node->init;
$node->append_conf('postgresql.conf', slurp_file($ENV{FORST_TAP_EXTRA_CONF}))
  if $ENV{FORST_TAP_EXTRA_CONF};
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
wal_level = replica
shared_buffers = 16MB
forst.memtable_size = '1MB'
forst.memtable_memory = '16MB'
forst.shared_block_cache_size = 0
forst.compaction_workers = 1
});
$node->start;

sub sql { return $node->safe_psql('postgres', $_[0]); }

# until the compaction count holds still for 3 s with no temporary file
sub settle
{
	my ($last, $same) = ('', 0);
	for (my $i = 0; $i < 300 && $same < 3; $i++)
	{
		my $now = sql('SELECT compactions FROM forst.stats');
		my @tmp = glob($node->data_dir . '/base/pgsql_tmp/*');
		$same = ($now eq $last && !@tmp) ? $same + 1 : 0;
		$last = $now;
		sleep 1;
	}
}

# 120 bytes of hex per row: lz4 keeps most of it
my $rows = 250000;
my $val = q{md5(g::text) || md5((g + 1)::text) || md5((g + 2)::text) || md5((g + 3)::text)};
sql(qq{
CREATE EXTENSION forst;
CREATE TABLE f (k int PRIMARY KEY, v text NOT NULL) USING forst;
INSERT INTO f SELECT g, $val FROM generate_series(1, $rows) g;
});

# Compactions merge the flushed files into one level-1 file, which is the
# table.  Level 0 may keep a few of the last flushes (fewer than the
# compaction trigger), so wait for the large file, then for compactions to
# stop: a running compaction has its temporary file, a finished one none.
$node->poll_query_until('postgres', q{
SELECT coalesce(max(size) > 16 << 20, false)
  FROM forst.files WHERE "table" = 'f'::regclass AND level > 0
}, 't') or die 'no compaction wrote a file of more than 16 MB: '
  . sql(q{SELECT level, count(*), sum(size) FROM forst.files GROUP BY 1 ORDER BY 1})
  . "\n" . sql('SELECT compactions, compaction_bytes_written FROM forst.stats');
settle();
my $largest = sql(q{SELECT max(size) FROM forst.files WHERE "table" = 'f'::regclass AND level > 0});
my $written = sql('SELECT compaction_bytes_written FROM forst.stats');
note "largest level-1 file: $largest bytes; compactions wrote $written bytes";

my $pid = sql(q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'forst compaction'});
like($pid, qr/^\d+$/, 'the compaction worker runs');
open(my $fh, '<', "/proc/$pid/status") or die "no /proc/$pid/status: $!";
my ($hwm) = map { /^VmHWM:\s+(\d+) kB/ ? $1 : () } <$fh>;
close($fh);
note "compaction worker peak resident size: $hwm kB";
cmp_ok($hwm * 1024, '<', $largest,
	'the compaction worker never held its output file in memory');

is(sql(qq{SELECT count(*), sum(hashtext(v)::bigint) FROM f}),
	sql(qq{SELECT count(*), sum(hashtext($val)::bigint) FROM generate_series(1, $rows) g}),
	'every row reads back from the compacted file');

my @left = glob($node->data_dir . '/base/pgsql_tmp/*');
is(scalar(@left), 0, 'no temporary file is left') or diag("left: @left");

# A compaction whose temporary file would pass temp_file_limit fails with
# PostgreSQL's own error (caught in the spool and raised again once the
# engine has returned, not thrown through it), the server stays up, and
# with the limit lifted compactions go on.
my $offset = -s $node->logfile;
sql(q{ALTER SYSTEM SET temp_file_limit = '2MB'});
sql('SELECT pg_reload_conf()');
# (the INSERT's own generate_series spills: not this session)
sql(qq{SET temp_file_limit = -1;
INSERT INTO f SELECT g, $val FROM generate_series($rows + 1, 2 * $rows) g});
ok($node->wait_for_log(
		qr/ERROR:  temporary file size exceeds temp_file_limit \(2048kB\)/,
		$offset),
	'a compaction past temp_file_limit fails with its error');
like(slurp_file($node->logfile, $offset),
	qr/exceeds temp_file_limit.*\n.*HINT:  .*raise temp_file_limit/,
	'and a hint that says which setting');
is(sql(qq{SELECT count(*), sum(hashtext(v)::bigint) FROM f}),
	sql(qq{SET temp_file_limit = -1;
SELECT count(*), sum(hashtext($val)::bigint) FROM generate_series(1, 2 * $rows) g}),
	'every row reads back while compactions fail');
sql('ALTER SYSTEM RESET temp_file_limit');
sql('SELECT pg_reload_conf()');
my $before = sql('SELECT compactions FROM forst.stats');
$node->poll_query_until('postgres',
	"SELECT compactions > $before FROM forst.stats", 't')
  or die 'no compaction ran after temp_file_limit was lifted';
settle();
is(sql(qq{SELECT count(*), sum(hashtext(v)::bigint) FROM f}),
	sql(qq{SET temp_file_limit = -1;
SELECT count(*), sum(hashtext($val)::bigint) FROM generate_series(1, 2 * $rows) g}),
	'every row reads back after compactions went on');
@left = glob($node->data_dir . '/base/pgsql_tmp/*');
is(scalar(@left), 0, 'no temporary file is left by the failed compactions')
  or diag("left: @left");

unlike(slurp_file($node->logfile, $offset),
	qr/terminated by signal|exited with exit code|PANIC|TRAP/,
	'no process crashed');

$node->stop;
done_testing();
