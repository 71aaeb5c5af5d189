# forst.compression, a codec per level, forst.block_size, a data block
# size per level, and forst.block_restart_interval
# (src/am/base/compression.c).
#
# Flushes write level 0 with the first codec and block size listed,
# compactions write level 1 with the second.  Checked on the files
# themselves, read from the file:// store: a file with zstd blocks carries
# SST format version 2 in its footer, every other file version 1, and an
# uncompressed file is about as large as its entries; a file's data blocks
# (one index entry each) hold about block size / bytes per entry entries.
# After a reload that swaps the lists, new flushes and compactions follow
# them while the rows read the same as a heap twin's from files of both,
# also after a restart.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('compression');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
forst.memtable_size = '1MB'
forst.memtable_memory = '8MB'
forst.target_file_size = '256kB'
forst.compression = 'none, zstd'
forst.block_size = '16kB, 4kB'
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE c (k int PRIMARY KEY, v text) USING forst;
CREATE TABLE ch (k int PRIMARY KEY, v text);
});
my $remote = $node->safe_psql('postgres', 'SELECT forst.remote_dir()');
$remote =~ s{^file://}{} or die "not a file:// store: $remote";

# len bytes of a file at offset (from its end if negative)
sub read_at
{
	my ($object, $offset, $len) = @_;
	my $path = "$remote/$object";
	open(my $fh, '<:raw', $path) or die "open $path: $!";
	seek($fh, $offset, $offset < 0 ? 2 : 0) or die "seek $path: $!";
	read($fh, my $bytes, $len) == $len or die "read $path: $!";
	close $fh;
	return $bytes;
}

# the format version in a file's footer (its first 4 bytes, little-endian)
sub footer_version { return unpack('V', read_at($_[0], -64, 4)); }

# The data blocks of a file: its index block has an entry per data block,
# each a restart point (restart interval 1), so the restart count that ends
# the index block's contents is their number.  The footer's index handle
# (offset 28) is a 64-bit offset and a 32-bit size.
sub data_blocks
{
	my ($object) = @_;
	my ($lo, $hi, $isize) = unpack('x28 V V V', read_at($object, -64, 64));
	return unpack('V', read_at($object, $lo + $hi * 4294967296 + $isize - 4, 4));
}

# a varint at $$pos of $bytes, moving $$pos past it
sub varint
{
	my ($bytes, $pos) = @_;
	my ($v, $shift) = (0, 0);
	while (1)
	{
		my $b = ord(substr($bytes, $$pos++, 1));
		$v += ($b & 0x7f) * 2**$shift;
		last if $b < 0x80;
		$shift += 7;
	}
	return $v;
}

# The restart points of a file's first data block, stored uncompressed:
# the index block's first entry (shared 0, key length, value length, the
# key, then the block's offset and size as varints) locates it, and its
# last 4 bytes are the count.
sub first_block_restarts
{
	my ($object) = @_;
	my ($lo, $hi, $isize) = unpack('x28 V V V', read_at($object, -64, 64));
	my $index = read_at($object, $lo + $hi * 4294967296, $isize);
	my $pos = 0;
	varint($index, \$pos);
	my $klen = varint($index, \$pos);
	varint($index, \$pos);
	$pos += $klen;
	my $offset = varint($index, \$pos);
	my $size = varint($index, \$pos);
	return unpack('V', read_at($object, $offset + $size - 4, 4));
}

# Each file's first block has about entries per block / interval restart
# points (the first block is full; the average counts the short last one).
sub restart_interval_is
{
	my ($level, $interval, $what) = @_;
	for (split /\n/, $node->safe_psql('postgres',
			qq{SELECT object, entries FROM forst.table_files('c') WHERE level = $level ORDER BY file_id}))
	{
		my ($object, $entries) = split /\|/;
		my $per_block = $entries / data_blocks($object);
		my $restarts = first_block_restarts($object);
		my $want = $per_block / $interval;
		ok($restarts >= 0.8 * $want && $restarts <= 1.5 * $want + 1,
			sprintf('%s: %d restart points in a block of about %.0f entries (interval %d set)',
				$what, $restarts, $per_block, $interval));
		return;
	}
	fail("$what: no file in level $level");
}

# level, version, size, entries and data blocks of every file of c
sub files
{
	my @f;
	for (split /\n/, $node->safe_psql('postgres',
			q{SELECT level, object, size, entries FROM forst.table_files('c') ORDER BY level, file_id}))
	{
		my ($level, $object, $size, $entries) = split /\|/;
		push @f, { level => $level, version => footer_version($object),
			size => $size, entries => $entries, blocks => data_blocks($object) };
	}
	return @f;
}

# waits until compactions settle (the file list stays the same for 2 s)
sub settle
{
	my $prev = '';
	for (1 .. 90)
	{
		my $n = $node->safe_psql('postgres',
			q{SELECT string_agg(level || ':' || file_id, ',' ORDER BY level, file_id) FROM forst.table_files('c')});
		return if $n eq $prev;
		$prev = $n;
		sleep 2;
	}
	die 'compactions did not settle';
}

# batches of writes, each flushed, so that level 0 fills and compacts
sub write_batches
{
	my ($sql_of) = @_;
	for my $b (0 .. 5)
	{
		$node->safe_psql('postgres', $sql_of->($b));
		$node->safe_psql('postgres', 'SELECT forst.checkpoint()');
	}
	settle();
	# one more flush, so that level 0 has a file written now
	$node->safe_psql('postgres', q{UPDATE c SET v = v || 'z' WHERE k % 97 = 0;
UPDATE ch SET v = v || 'z' WHERE k % 97 = 0});
	$node->safe_psql('postgres', 'SELECT forst.checkpoint()');
}

sub same_as_heap
{
	my ($what) = @_;
	my $q = q{SELECT count(*), md5(string_agg(k || v, ',' ORDER BY k)) FROM %s};
	is($node->safe_psql('postgres', sprintf($q, 'c')),
		$node->safe_psql('postgres', sprintf($q, 'ch')), "$what: c equals its heap twin");
	my $p = q{SELECT string_agg(v, ',' ORDER BY k) FROM %s WHERE k IN (1, 777, 15000, 29999, 40001)};
	is($node->safe_psql('postgres', sprintf($p, 'c')),
		$node->safe_psql('postgres', sprintf($p, 'ch')), "$what: point reads equal the heap twin's");
}

# each level's files: count, format versions, bytes per entry
sub by_level
{
	my (@f) = @_;
	my %l;
	for my $f (@f)
	{
		my $s = $l{ $f->{level} } //= { n => 0, versions => {}, size => 0, entries => 0, blocks => 0 };
		$s->{n}++;
		$s->{versions}{ $f->{version} }++;
		$s->{size} += $f->{size};
		$s->{entries} += $f->{entries};
		$s->{blocks} += $f->{blocks};
	}
	return \%l;
}

sub versions { return join(',', sort keys %{ $_[0]{versions} }); }

# The uncompressed bytes of a level's average data block, estimated as its
# entries per block times $bytes_per_entry (an uncompressed file's bytes
# per entry), within 30% of the block size the level was written with.
# Each file's last block is cut short by the file's end: counted as half.
sub block_size_is
{
	my ($s, $bytes_per_entry, $kb, $what) = @_;
	my $est = $s->{entries} / ($s->{blocks} - $s->{n} / 2) * $bytes_per_entry;
	ok($est > 0.7 * $kb * 1024 && $est < 1.3 * $kb * 1024,
		sprintf('%s: %d blocks of about %.0f bytes (%d kB set)', $what,
			$s->{blocks}, $est, $kb));
}

# Phase 1: level 0 uncompressed, level 1 zstd.
write_batches(sub {
	my ($b) = @_;
	my $lo = $b * 5000 + 1;
	my $hi = ($b + 1) * 5000;
	return qq{INSERT INTO c SELECT i, md5(i::text) || md5((i + 1)::text) FROM generate_series($lo, $hi) i;
INSERT INTO ch SELECT i, md5(i::text) || md5((i + 1)::text) FROM generate_series($lo, $hi) i};
});
my $l = by_level(files());
ok($l->{0} && $l->{1}, 'phase 1: files in levels 0 and 1')
	or diag explain $l;
is(versions($l->{0}), '1', "'none, zstd': flushed level 0 files are format 1");
is(versions($l->{1}), '2', "'none, zstd': level 1 files, written by compaction, are zstd (format 2)");
my $zstd_per_entry = $l->{1}{size} / $l->{1}{entries};
my $none_per_entry = $l->{0}{size} / $l->{0}{entries};
# a row here is about 90 bytes of key, header and 64 hex characters
cmp_ok($none_per_entry, '>', 90, sprintf('uncompressed level 0: %.1f bytes per entry', $none_per_entry));
cmp_ok($zstd_per_entry, '<', 0.7 * $none_per_entry,
	sprintf('zstd level 1: %.1f bytes per entry', $zstd_per_entry));
block_size_is($l->{0}, $none_per_entry, 16, "'16kB, 4kB': level 0");
block_size_is($l->{1}, $none_per_entry, 4, "'16kB, 4kB': level 1");
restart_interval_is(0, 4, 'the default restart interval: level 0');
same_as_heap('phase 1');

# Phase 2: swapped by a reload.  Updates of every key rewrite every level 1
# file, so the zstd files of phase 1 are all replaced.
$node->safe_psql('postgres', q{ALTER SYSTEM SET forst.compression = 'zstd, none';
ALTER SYSTEM SET forst.block_size = '4kB, 32kB';
ALTER SYSTEM SET forst.block_restart_interval = 16});
$node->reload;
$node->poll_query_until('postgres', q{SELECT current_setting('forst.compression') = 'zstd, none'
AND current_setting('forst.block_size') = '4kB, 32kB'
AND current_setting('forst.block_restart_interval') = '16'})
	or die 'reload not seen';
write_batches(sub {
	my ($b) = @_;
	return qq{UPDATE c SET v = md5(v) || md5(k::text) WHERE k % 6 = $b;
UPDATE ch SET v = md5(v) || md5(k::text) WHERE k % 6 = $b};
});
$l = by_level(files());
ok($l->{0} && $l->{1}, 'phase 2: files in levels 0 and 1')
	or diag explain $l;
is(versions($l->{0}), '2', "'zstd, none': flushed level 0 files are zstd (format 2)");
is(versions($l->{1}), '1', "'zstd, none': level 1 files are format 1");
my $l1_per_entry = $l->{1}{size} / $l->{1}{entries};
cmp_ok($l1_per_entry, '>', 90, sprintf('uncompressed level 1: %.1f bytes per entry', $l1_per_entry));
block_size_is($l->{0}, $none_per_entry, 4, "'4kB, 32kB': level 0");
block_size_is($l->{1}, $none_per_entry, 32, "'4kB, 32kB': level 1");
restart_interval_is(1, 16, 'forst.block_restart_interval = 16: level 1');
same_as_heap('phase 2');

$node->restart;
same_as_heap('after a restart');

# A bad list in the configuration file is refused at reload, and the
# server keeps the codecs it had.  (ALTER SYSTEM's value would override it.)
$node->safe_psql('postgres', 'ALTER SYSTEM RESET forst.compression');
$node->append_conf('postgresql.conf', "forst.compression = 'lz4, brotli'");
$node->reload;
sleep 1;
is($node->safe_psql('postgres', 'SHOW forst.compression'), 'zstd, none',
	'a bad list at reload leaves the setting as it was');
ok($node->log_contains(qr/"brotli" is not a compression codec/),
	'and the log says why');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET forst.block_size');
$node->append_conf('postgresql.conf', "forst.block_size = '8kB, 2kB'");
$node->reload;
sleep 1;
is($node->safe_psql('postgres', 'SHOW forst.block_size'), '4kB, 32kB',
	'a block size out of range at reload leaves the setting as it was');
ok($node->log_contains(qr/A block size of 2 kB is outside 4 kB \.\. 64 kB/),
	'and the log says why');

$node->stop;
done_testing();
