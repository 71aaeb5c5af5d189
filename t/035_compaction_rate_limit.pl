# forst.compaction_rate_limit holds a compaction's writes to its rate, and
# a compaction sleeping for it can be cancelled.  VACUUM (FREEZE) rewrites
# files that hold xids in the backend itself (tableam/vacuum.c), so that is
# where the rate and the cancel are watched: written bytes over the
# VACUUM's time stay within the rate plus one output file; a cancel ends
# the statement with PostgreSQL's own error (checked for once the engine
# has returned, not raised through it); the table is as it was, and
# without the limit the same VACUUM finishes and leaves no xid in a file.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $node = PostgreSQL::Test::Cluster->new('ratelimit');
$node->init;
$node->append_conf('postgresql.conf', slurp_file($ENV{FORST_TAP_EXTRA_CONF}))
  if $ENV{FORST_TAP_EXTRA_CONF};
# no compaction workers: the flush worker compacts only right after it
# flushes, so once writes stop the VACUUM is the only compaction
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
wal_level = replica
forst.memtable_size = '1MB'
forst.memtable_memory = '16MB'
forst.target_file_size = '256kB'
forst.compaction_workers = 0
autovacuum = off
});
$node->start;

sub sql { return $node->safe_psql('postgres', $_[0]); }

sql(q{
CREATE EXTENSION forst;
CREATE TABLE f (k int PRIMARY KEY, v text NOT NULL) USING forst;
CREATE TABLE h (k int PRIMARY KEY, v text NOT NULL);
});
my $same = q{SELECT (SELECT count(*) FROM f) || ' ' ||
	(SELECT count(*) FROM (SELECT * FROM f EXCEPT SELECT * FROM h) x) || ' ' ||
	(SELECT count(*) FROM (SELECT * FROM h EXCEPT SELECT * FROM f) x)};

# rows flushed while an older snapshot runs keep their xids
my $bg = $node->background_psql('postgres');
$bg->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM h;');
for my $t ('f', 'h')
{
	sql(qq{INSERT INTO $t SELECT g, md5(g::text) || md5((g + 1)::text)
		FROM generate_series(1, 40000) g});
}
sql('SELECT forst.checkpoint()');
$bg->query_safe('COMMIT');
$bg->quit;
my $files = sql(q{SELECT count(*) FROM forst.table_files('f') WHERE xid_min IS NOT NULL});
cmp_ok($files, '>', 1, "$files files hold xids");

# 64 kB/s: an output file (about 256 kB) every 4 s
sql(q{ALTER SYSTEM SET forst.compaction_rate_limit = 64});
sql('SELECT pg_reload_conf()');
my $written0 = sql('SELECT compaction_bytes_written FROM forst.stats');
my $t0 = time();
my $vac = $node->background_psql('postgres');
my $vpid = $vac->query_safe('SELECT pg_backend_pid()');
$vac->query_until(qr/started/, "\\echo started\nVACUUM (FREEZE) f;\n");
sleep 6;
my $written = sql('SELECT compaction_bytes_written FROM forst.stats') - $written0;
my $t1 = time();
my $max_file = sql(q{SELECT coalesce(max(size), 0) FROM forst.files});
my $allowed = 64 * 1024 * ($t1 - $t0) + $max_file;
note sprintf('%d bytes written in %.1f s; the rate allows %d', $written, $t1 - $t0, $allowed);
cmp_ok($written, '>', 0, 'the VACUUM compacts');
cmp_ok($written, '<=', $allowed,
	'within the rate plus one output file');
is(sql(qq{SELECT wait_event_type || ':' || wait_event FROM pg_stat_activity WHERE pid = $vpid}),
	'Extension:Extension', 'the VACUUM sleeps for the rate');

# a cancel while it sleeps
sql("SELECT pg_cancel_backend($vpid)");
# (background psql stops at the error: wait for it to exit)
eval { $vac->{run}->finish; };
like($vac->{stderr}, qr/canceling statement due to user request/,
	'a cancel ends the VACUUM with the cancel error');
is(sql($same), '40000 0 0', 'rows equal the heap twin after the cancel');
unlike(slurp_file($node->logfile),
	qr/terminated by signal|exited with exit code|PANIC|TRAP/,
	'no process crashed');

# without the limit the same VACUUM finishes
sql('ALTER SYSTEM RESET forst.compaction_rate_limit');
sql('SELECT pg_reload_conf()');
sql('VACUUM (FREEZE) f');
is(sql(q{SELECT count(*) FROM forst.table_files('f') WHERE xid_min IS NOT NULL}),
	'0', 'without the limit VACUUM (FREEZE) rewrites every file with xids');
is(sql($same), '40000 0 0', 'rows equal the heap twin');

$node->stop;
done_testing();
