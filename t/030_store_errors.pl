# Errors of the object store, as clients see them (docs/configuration.md,
# "Errors"): SQLSTATEs that no driver or connection pool reads as "the
# connection is broken" (class 08) or "the login failed" (28000), messages
# that name the object and the table, and hints.
#
#  - a file:// forst.remote_dir under a missing parent: 58P01 with a hint,
#    not XX001 (data_corrupted); the server stays up;
#  - one under an existing parent: created at first use, logged, and used;
#  - an SST file missing from the store: XX001, naming the object and the
#    table "public.t";
#  - a manifest and a checkpoint of a newer format: 0A000 with the versions
#    and a hint to upgrade forst;
#  - an s3:// endpoint nobody listens on at 127.0.0.1: 58000 (system_error)
#    with a hint, not 08001; no S3 server is needed for that.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Path qw(make_path);

my $node = PostgreSQL::Test::Cluster->new('errors');
$node->init(allows_streaming => 1);
my $base = PostgreSQL::Test::Utils::tempdir();
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
forst.remote_dir = 'file://$base/no-such-parent/remote'
forst.cache_size = 0
});
$node->start;

sub try_sql
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	my $rc = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql",
		stdout => \$out, stderr => \$err, on_error_stop => 1);
	return ($rc, $out, $err);
}

# --- 1. a missing parent directory: 58P01 and a hint, nothing created
$node->safe_psql('postgres', 'CREATE EXTENSION forst');
my ($rc, $out, $err) = try_sql('CREATE TABLE t (k int PRIMARY KEY, v text) USING forst');
isnt($rc, 0, 'a table cannot be created under a missing parent directory');
like($err,
	qr/ERROR:  58P01: forst: directory "\Q$base\E\/no-such-parent\/remote" of forst.remote_dir does not exist/,
	'SQLSTATE 58P01 (undefined_file) naming the directory');
like($err, qr/DETAIL:  Its parent directory "\Q$base\E\/no-such-parent" does not exist either\./,
	'the detail names the missing parent');
like($err, qr/HINT:  Create the directory, or correct forst.remote_dir/, 'with a hint');
unlike($err, qr/XX001|08001|08006|28000/, 'no data_corrupted, connection or login SQLSTATE');
ok(!-e "$base/no-such-parent", 'nothing was created');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server stays up');

# --- 2. an existing parent: the directory is created and used
$node->append_conf('postgresql.conf', "forst.remote_dir = 'file://$base/remote'\n");
$node->restart;
$node->safe_psql('postgres', q{
CREATE TABLE t (k int PRIMARY KEY, v text) USING forst;
CREATE TABLE s (k int PRIMARY KEY) USING forst;
CREATE TABLE n (k int PRIMARY KEY) USING forst;
INSERT INTO t SELECT g, repeat('x', 100) FROM generate_series(1, 1000) g;
INSERT INTO n SELECT g FROM generate_series(1, 100) g;
});
my $ckpt = $node->safe_psql('postgres', 'SELECT forst.checkpoint()');
my $t_node = $node->safe_psql('postgres', "SELECT pg_relation_filenode('t')");
my $n_node = $node->safe_psql('postgres', "SELECT pg_relation_filenode('n')");
ok(-d "$base/remote", 'forst.remote_dir is created under an existing parent');
like(slurp_file($node->logfile),
	qr/LOG:  forst: created directory "\Q$base\E\/remote" for forst.remote_dir/,
	'and the server logs it');
my @sst = glob("$base/remote/*/tables/*.$t_node/sst/*/*.sst");
cmp_ok(scalar @sst, '>', 0, 'SST files were written there');
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), '1000', 'the rows read back');

# --- 3. an SST file the manifest names is gone: XX001 names it and the table
$node->stop;
unlink @sst;
$node->start;
($rc, $out, $err) = try_sql('SELECT count(*) FROM t');
isnt($rc, 0, 'a read fails when an SST file is missing');
like($err, qr/ERROR:  XX001: forst: .*\.sst/, 'SQLSTATE XX001 (data_corrupted) naming the object');
like($err, qr/DETAIL:  The object belongs to table "public\.t" \(relfilenode \d+\)\./,
	'the detail names the table');
$node->safe_psql('postgres', 'DROP TABLE t');

# --- 4. objects of a newer forst: 0A000, the version found and the versions
# read, a hint to upgrade (docs/operations.md, "On-disk formats and their
# versions"); the manifest's format major version is at byte 8, the
# checkpoint's in its first line
$node->stop;
my @man = sort glob("$base/remote/*/tables/*.$n_node/manifest/*");
cmp_ok(scalar @man, '>', 0, 'table n has a manifest');
{
	open(my $fh, '+<:raw', $man[-1]) or die "$man[-1]: $!";
	seek($fh, 8, 0);
	print $fh pack('V', 2);
	close($fh);
}
my ($ck) = glob("$base/remote/*/checkpoints/" . sprintf('%020d', $ckpt));
ok(defined $ck && -f $ck, 'the checkpoint object is there');
{
	my $obj = slurp_file($ck);
	$obj =~ s/^forst-checkpoint 1 /forst-checkpoint 2 /;
	open(my $fh, '>:raw', $ck) or die "$ck: $!";
	print $fh $obj;
	close($fh);
}
$node->start;
($rc, $out, $err) = try_sql('SELECT count(*) FROM n');
isnt($rc, 0, 'a manifest of a newer format is refused');
like($err, qr/ERROR:  0A000: forst: .*manifest.*: manifest format version 2\.\d+ is newer than this build reads \(1\.x\)/,
	'SQLSTATE 0A000 naming the manifest, its version and the versions read');
like($err, qr/DETAIL:  The object belongs to table "public\.n"/, 'and the table');
like($err, qr/HINT:  A newer version of forst wrote the object: install that version/,
	'with a hint to upgrade forst');
($rc, $out, $err) = try_sql("SELECT forst.checkpoint_read($ckpt)");
like($err,
	qr/ERROR:  0A000: forst: checkpoint ".*" has format version 2, newer than this build reads \(versions 1 to 1\)/,
	'a checkpoint of a newer format: SQLSTATE 0A000');
like($err, qr/HINT:  A newer version of forst wrote the object/, 'with a hint to upgrade forst');
$node->safe_psql('postgres', 'DROP TABLE n');

# --- 5. an S3 endpoint nobody listens on: 58000 and a hint (reading s
# lists its manifests in the store)
my $closed = PostgreSQL::Test::Cluster::get_free_port();
$node->append_conf('postgresql.conf', qq{
forst.remote_dir = 's3://forst-test/errors'
forst.s3_endpoint = 'http://127.0.0.1:$closed'
forst.s3_access_key_id = 'FORSTTESTACCESSKEY'
forst.s3_secret_access_key = 'not-a-secret'
forst.s3_max_retries = 2
});
$node->restart;
($rc, $out, $err) = try_sql('SELECT count(*) FROM s');
isnt($rc, 0, 'a statement fails when the endpoint does not answer');
like($err, qr/ERROR:  58000: forst: .*could not connect to endpoint/,
	'SQLSTATE 58000 (system_error) for an unreachable endpoint');
like($err, qr/HINT:  Check that the object store is running/, 'with a hint');
unlike($err, qr/ERROR:  08/, 'not class 08 (connection exception)');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server stays up');

$node->stop;
done_testing();
