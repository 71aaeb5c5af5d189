# Prepared transactions survive a crash with their forst rows: invisible
# until COMMIT PREPARED, gone after ROLLBACK PREPARED.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('twophase');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'forst'\nmax_prepared_transactions = 5");
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION forst;
CREATE TABLE f (id int PRIMARY KEY, v text) USING forst;
INSERT INTO f VALUES (1, 'one'), (2, 'two');
CHECKPOINT;
BEGIN; INSERT INTO f VALUES (10, 'p1'); UPDATE f SET v = 'one p1' WHERE id = 1; PREPARE TRANSACTION 'p1';
BEGIN; INSERT INTO f VALUES (20, 'p2'); DELETE FROM f WHERE id = 2; PREPARE TRANSACTION 'p2';
});
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', "SELECT string_agg(id || '=' || v, ',' ORDER BY id) FROM f"),
	'1=one,2=two', 'prepared rows are invisible after the crash');
$node->safe_psql('postgres', "COMMIT PREPARED 'p1'; ROLLBACK PREPARED 'p2'");
is($node->safe_psql('postgres', "SELECT string_agg(id || '=' || v, ',' ORDER BY id) FROM f"),
	'1=one p1,2=two,10=p1', 'COMMIT PREPARED shows them, ROLLBACK PREPARED drops them');
$node->restart;
is($node->safe_psql('postgres', "SELECT string_agg(id || '=' || v, ',' ORDER BY id) FROM f"),
	'1=one p1,2=two,10=p1', 'and so after a clean restart');
$node->stop;
done_testing();
