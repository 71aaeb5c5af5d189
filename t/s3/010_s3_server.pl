# forst tables on s3:// (run by the s3 step of scripts/test.sh against a
# local S3 server, whose client environment it gets: S3_ENDPOINT,
# S3_BUCKET, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY).
#
#  - credentials from the AWS_* environment; flushed rows read back from
#    S3 after a restart;
#  - the secret settings are never visible: SHOW and pg_settings print
#    "********" to superusers and nothing to others, the server log never
#    holds them;
#  - a wrong secret (set with a reload) fails queries with SQLSTATE 58030
#    (io_error, not 28000: the client's login did not fail)
#    and a hint; the flush worker logs, backs off and stays up, and flushes
#    by itself once the right secret is reloaded;
#  - a closed endpoint port (58000, not class 08: the client's connection
#    is fine) and a missing bucket (42704) give clear
#    errors and the server stays up;
#  - statement_timeout and pg_cancel_backend stop a query whose S3 request
#    hangs (a stalling proxy) within about a second, with the usual errors.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time sleep);
use File::Basename qw(dirname);

my ($ep, $bucket) = ($ENV{S3_ENDPOINT}, $ENV{S3_BUCKET});
my ($ak, $sk) = ($ENV{AWS_ACCESS_KEY_ID}, $ENV{AWS_SECRET_ACCESS_KEY});
plan skip_all => 'no S3 server (S3_ENDPOINT unset)' unless $ep && $bucket && $ak && $sk;
my ($ep_port) = $ep =~ /:(\d+)\/?$/;

my $prefix = "tap-$$-" . int(time);
my $node = PostgreSQL::Test::Cluster->new('s3');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
forst.remote_dir = 's3://$bucket/$prefix'
forst.memtable_size = '1MB'
forst.memtable_memory = '4MB'
forst.s3_max_retries = 2
# every read goes to S3: the disk cache would serve SST blocks and
# manifests without it, and the errors below would not happen
forst.cache_size = 0
});
$node->start;

# runs sql in a new session; returns (exit code, stdout, stderr) with
# SQLSTATEs in the messages
sub try_sql
{
	my ($sql, %opt) = @_;
	my ($out, $err) = ('', '');
	my $rc = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql",
		stdout => \$out, stderr => \$err, on_error_stop => 1, %opt);
	return ($rc, $out, $err);
}

sub wait_for
{
	my ($sql, $want, $what) = @_;
	for (1 .. 600)
	{
		my $got = $node->safe_psql('postgres', $sql);
		return 1 if $got eq $want;
		sleep 0.1;
	}
	diag("timed out waiting for $what");
	return 0;
}

sub flush_worker_pid
{
	return $node->safe_psql('postgres',
		q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'forst flush'});
}

# --- 1. environment credentials; rows come back from S3 after a restart
$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE f (k bigint PRIMARY KEY, v text) USING forst;
CREATE TABLE h (k bigint PRIMARY KEY, v text);
CREATE TABLE fk (a int, b text) USING forst;
});
for my $r (0 .. 9)
{
	$node->safe_psql('postgres', qq{
INSERT INTO f SELECT g, repeat('v', 200) || g FROM generate_series($r * 2000 + 1, ($r + 1) * 2000) g;
INSERT INTO h SELECT g, repeat('v', 200) || g FROM generate_series($r * 2000 + 1, ($r + 1) * 2000) g;
});
}
ok(wait_for(q{SELECT count(*) > 0 FROM forst.files WHERE "table" = 'f'::regclass}, 't',
		'SST files'),
	'memtables were flushed to SST files in S3');
my $twin = q{SELECT count(*), sum(hashtext(v)), max(k) FROM };
my $expected = $node->safe_psql('postgres', $twin . 'h');
$node->restart;
is($node->safe_psql('postgres', $twin . 'f'), $expected,
	'after a restart the forst table reads the same as its heap twin (from S3)');

# --- 2. secrets are never visible
$node->append_conf('postgresql.conf', qq{
forst.s3_access_key_id = '$ak'
forst.s3_secret_access_key = '$sk'
});
$node->reload;
$node->safe_psql('postgres', 'CREATE ROLE alice LOGIN');
is($node->safe_psql('postgres', 'SHOW forst.s3_secret_access_key'), '********',
	'SHOW prints a mask for the secret, even to a superuser');
is($node->safe_psql('postgres',
		q{SELECT setting FROM pg_settings WHERE name = 'forst.s3_secret_access_key'}),
	'********', 'pg_settings masks the secret');
is($node->safe_psql('postgres', 'SHOW forst.s3_session_token'), '',
	'an unset session token shows empty');
my ($rc, $out, $err) = try_sql('SHOW forst.s3_secret_access_key', extra_params => [ '-U', 'alice' ]);
like($err, qr/42501/, 'a non-superuser cannot SHOW the secret');
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_settings WHERE name LIKE 'forst.s3_%key%'},
		extra_params => [ '-U', 'alice' ]),
	'0', 'a non-superuser sees no credential settings in pg_settings');
is($node->safe_psql('postgres', $twin . 'f'), $expected,
	'credentials from the settings work');

# --- 3. a wrong secret: SQLSTATE 58030; the flush worker survives it
my $worker = flush_worker_pid();
$node->append_conf('postgresql.conf', "forst.s3_secret_access_key = 'wrong-$sk'\n");
$node->reload;
sleep 0.5;
($rc, $out, $err) = try_sql('SELECT count(*) FROM f');
isnt($rc, 0, 'a query fails with a wrong secret');
like($err, qr/ERROR:  58030: forst: .*SignatureDoesNotMatch/, 'with SQLSTATE 58030 naming the cause');
like($err, qr/DETAIL:  The object belongs to table "public\.f" \(relfilenode \d+\)\./, 'and the table by name');
like($err, qr/HINT:  Check forst.s3_access_key_id and forst.s3_secret_access_key/, 'and a hint');
# writes into memtables go on; their flush fails until the secret is fixed
$node->safe_psql('postgres',
	q{INSERT INTO fk SELECT g, repeat('y', 300) FROM generate_series(1, 5000) g});
sleep 3;
is(flush_worker_pid(), $worker, 'the flush worker stays up while flushes fail');
$node->append_conf('postgresql.conf', "forst.s3_secret_access_key = '$sk'\n");
$node->reload;
ok(wait_for(q{SELECT count(*) > 0 FROM forst.files WHERE "table" = 'fk'::regclass}, 't',
		'flush after the fix'),
	'after the reload the flush worker flushes by itself');
is(flush_worker_pid(), $worker, 'with the same flush worker process');
is($node->safe_psql('postgres', 'SELECT count(*) FROM fk'), '5000', 'no row was lost');
my $log = slurp_file($node->logfile);
unlike($log, qr/\Q$sk\E/, 'the server log never shows the secret');
like($log, qr/forst: .*SignatureDoesNotMatch/, 'the failed flushes were logged');

# --- 4. a closed endpoint port, then a missing bucket
my $closed = PostgreSQL::Test::Cluster::get_free_port();
$node->append_conf('postgresql.conf', "forst.s3_endpoint = 'http://127.0.0.1:$closed'\n");
$node->restart;
my $t0 = time;
($rc, $out, $err) = try_sql('SELECT count(*) FROM f');
like($err, qr/ERROR:  58000: forst: .*could not connect to endpoint/,
	'a closed endpoint port: SQLSTATE 58000');
like($err, qr/HINT:  Check that the object store is running/, 'with a hint');
cmp_ok(time - $t0, '<', 20, 'after a bounded number of retries');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server stays up');

$node->append_conf('postgresql.conf', qq{
forst.s3_endpoint = '$ep'
forst.remote_dir = 's3://forst-no-such-bucket-$$/x'
});
$node->restart;
($rc, $out, $err) = try_sql('SELECT count(*) FROM f');
like($err, qr/ERROR:  42704: forst: .*bucket "forst-no-such-bucket-\d+" does not exist/,
	'a missing bucket: SQLSTATE 42704');
like($err, qr/HINT:  Create the bucket/, 'with a hint');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server stays up');

# --- 5. cancel and statement_timeout during a request that hangs
my $proxy_port = PostgreSQL::Test::Cluster::get_free_port();
my $mode_file = "$PostgreSQL::Test::Utils::tmp_check/s3-proxy-mode";
PostgreSQL::Test::Utils::append_to_file($mode_file, "pass\n");
my $proxy_script = dirname(__FILE__) . '/../../scripts/s3-stall-proxy.py';
$proxy_script = $ENV{FORST_STALL_PROXY} if $ENV{FORST_STALL_PROXY};
my ($pin, $pout) = ('', '');
my $proxy = IPC::Run::start([ 'python3', $proxy_script, $proxy_port, $ep_port, $mode_file ],
	'<', \$pin, '>', \$pout, '2>', \$pout);
IPC::Run::pump($proxy) until $pout =~ /listening/;

sub set_mode
{
	open my $fh, '>', $mode_file or die "$mode_file: $!";
	print $fh "$_[0]\n";
	close $fh;
}

$node->append_conf('postgresql.conf', qq{
forst.remote_dir = 's3://$bucket/$prefix'
forst.s3_endpoint = 'http://127.0.0.1:$proxy_port'
forst.s3_request_timeout = '120s'
});
$node->restart;
is($node->safe_psql('postgres', $twin . 'f'), $expected, 'reads through the proxy');

set_mode('stall');
$t0 = time;
($rc, $out, $err) = try_sql("SET statement_timeout = '1s';\nSELECT count(*) FROM f");
my $took = time - $t0;
like($err, qr/ERROR:  57014: canceling statement due to statement timeout/,
	'statement_timeout stops a query stuck on S3, with the usual error');
cmp_ok($took, '<', 4, "within about a second of the timeout (took ${took}s)");

my ($qout, $qerr) = ('', '');
my $q = IPC::Run::start(
	[ 'psql', '-XAtq', '-v', 'VERBOSITY=verbose', '-d', $node->connstr('postgres'),
	  '-c', 'SELECT count(*) FROM f' ],
	'>', \$qout, '2>', \$qerr);
ok(wait_for(q{SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT count(*) FROM f' AND state = 'active'},
		'1', 'the stuck query'),
	'a query is stuck on S3');
sleep 1;
$t0 = time;
$node->safe_psql('postgres',
	q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query = 'SELECT count(*) FROM f'});
$q->finish;
$took = time - $t0;
like($qerr, qr/57014: canceling statement due to user request/,
	'pg_cancel_backend stops it with the usual error');
cmp_ok($took, '<', 2, "within a second (took ${took}s)");

set_mode('pass');
is($node->safe_psql('postgres', $twin . 'f'), $expected, 'reads again once S3 answers');
$log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|server process .* was terminated/,
	'no backend crashed');
unlike($log, qr/\Q$sk\E/, 'the server log never shows the secret');

$proxy->kill_kill;
$node->stop;
done_testing();
