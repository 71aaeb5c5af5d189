# Loading rules of forst: CREATE EXTENSION needs shared_preload_libraries,
# and an unusable forst.remote_dir stops the server from starting.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->start;

# Without shared_preload_libraries: refused, with our message and hint, and
# nothing of the extension is left behind.
my ($ret, $stdout, $stderr) =
  $node->psql('postgres', 'CREATE EXTENSION forst');
isnt($ret, 0, 'CREATE EXTENSION fails without shared_preload_libraries');
like(
	$stderr,
	qr/ERROR:  forst must be loaded via shared_preload_libraries/,
	'error message names shared_preload_libraries');
like(
	$stderr,
	qr/HINT:  Add forst to shared_preload_libraries in postgresql.conf and restart the server\./,
	'hint says how to fix it');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM pg_namespace WHERE nspname = 'forst'"),
	'0',
	'failed CREATE EXTENSION leaves no schema behind');
is($node->safe_psql('postgres', 'SHOW shared_preload_libraries'),
	'', 'forst is not preloaded');

# With shared_preload_libraries: CREATE EXTENSION works, and the default
# remote_dir is file://<data directory>/forst/remote.
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'forst'");
$node->restart;
($ret, $stdout, $stderr) =
  $node->psql('postgres', 'CREATE EXTENSION forst');
is($ret, 0, 'CREATE EXTENSION succeeds with shared_preload_libraries');
is($stderr, '', 'no error or warning');
is($node->safe_psql('postgres', 'SELECT forst.version()'),
	'1.8', 'forst.version()');
my $datadir = $node->safe_psql('postgres', 'SHOW data_directory');
is( $node->safe_psql('postgres', 'SELECT forst.remote_dir()'),
	"file://$datadir/forst/remote",
	'default remote_dir is under the data directory');

# A valid remote_dir in postgresql.conf is taken as given.
$node->append_conf('postgresql.conf',
	"forst.remote_dir = 's3://forst-test/cluster-1'");
$node->restart;
is( $node->safe_psql('postgres', 'SELECT forst.remote_dir()'),
	's3://forst-test/cluster-1',
	's3:// remote_dir from postgresql.conf');

# An unknown forst.* name in postgresql.conf: the prefix is reserved, so
# the server warns and drops it.
$node->append_conf('postgresql.conf', "forst.no_such_setting = 1");
my $offset = -s $node->logfile;
$node->restart;
ok( $node->log_contains(
		qr/WARNING:  invalid configuration parameter name "forst\.no_such_setting", removing it/,
		$offset),
	'unknown forst.* parameter is reported and removed');

# Invalid values in postgresql.conf: the server refuses to start and says
# why in its log.
my @invalid = (
	[ 'ftp://x', qr/must be empty \(the default\), file:\/\/\/absolute\/path or s3:\/\/bucket\/prefix/ ],
	[ 'file://relative/dir', qr/must name an absolute path/ ],
	[ 's3://', qr/must name a bucket of 3 to 63 characters/ ],
);
foreach my $case (@invalid)
{
	my ($value, $detail) = @$case;

	$node->stop;
	$node->append_conf('postgresql.conf', "forst.remote_dir = '$value'");
	$offset = -s $node->logfile;
	my $started = $node->start(fail_ok => 1);
	is($started, 0, "server refuses to start with forst.remote_dir = '$value'");
	ok( $node->log_contains(
			qr/FATAL:  invalid value for parameter "forst\.remote_dir": "\Q$value\E"/,
			$offset),
		"log names the parameter and the value '$value'");
	ok($node->log_contains(qr/DETAIL:  .*$detail/, $offset),
		"log explains what is wrong with '$value'");
}

# Back to a valid value: the server starts again.
$node->append_conf('postgresql.conf', "forst.remote_dir = ''");
$node->start;
is($node->safe_psql('postgres', 'SELECT forst.remote_dir()'),
	"file://$datadir/forst/remote", 'server starts after the fix');
$node->stop;

done_testing();
