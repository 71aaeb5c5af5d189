# The object store that a TAP test's servers share, as the test sees it: a
# file:// directory of its own, or, in the s3 step, the bucket that
# FORST_TAP_EXTRA_CONF names (listed with the aws CLI, as a user would).
#
#	my $store = ForstStore->new;		# file:// in a temporary directory
#	my $node = $store->server('a', "forst.memtable_size = '1MB'\n");
#	my @keys = $store->keys('<cluster>/tables/');
#	my @objs = $store->objects;			# [key, size] of every object
package ForstStore;

use strict;
use warnings;

use File::Find;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;

sub new
{
	my ($class) = @_;
	my $self = bless {}, $class;

	if ($ENV{FORST_TAP_EXTRA_CONF})
	{
		$self->{conf} = slurp_file($ENV{FORST_TAP_EXTRA_CONF});
		($self->{bucket}, $self->{base}) =
		  $self->{conf} =~ m{forst\.remote_dir\s*=\s*'s3://([^/']+)/?([^']*)'}
		  or die "FORST_TAP_EXTRA_CONF sets no s3:// forst.remote_dir";
		$self->{base} .= '/' if $self->{base} ne '' && $self->{base} !~ m{/$};
	}
	else
	{
		$self->{dir} = PostgreSQL::Test::Utils::tempdir('store');
		$self->{conf} = "forst.remote_dir = 'file://$self->{dir}'\n";
	}
	return $self;
}

# The settings that point a server at the store.
sub conf { return $_[0]->{conf}; }

# A server started on this store with forst preloaded, settings (lines of
# postgresql.conf) and the extension created; it can stream (wal_level
# replica, as forst tables need).
sub server
{
	my ($self, $name, $settings) = @_;
	my $n = PostgreSQL::Test::Cluster->new($name);

	$n->init(allows_streaming => 1);
	$n->append_conf('postgresql.conf',
		"shared_preload_libraries = 'forst'\n" . ($settings // '') . $self->conf);
	$n->start;
	$n->safe_psql('postgres', 'CREATE EXTENSION forst');
	return $n;
}

# Whether the store is the s3 step's bucket.
sub is_s3 { return defined $_[0]->{bucket}; }

# A file store's directory (undef on S3).
sub dir { return $_[0]->{dir}; }

# [key, size] of every object under prefix (default: all), keys relative to
# the store, sorted; a file store's temporary files (".name") are left out.
sub objects
{
	my ($self, $prefix) = @_;
	my @objs;

	$prefix //= '';
	if ($self->is_s3)
	{
		my $url = "s3://$self->{bucket}/$self->{base}$prefix";
		my $out = `aws --endpoint-url "$ENV{S3_ENDPOINT}" s3 ls --recursive "$url" 2>&1`;
		# an empty listing exits 1
		die "aws s3 ls $url failed: $out" if $? != 0 && $out !~ /^\s*$/;
		for (split /\n/, $out)
		{
			my @f = split ' ', $_, 4;
			next unless defined $f[3];
			(my $k = $f[3]) =~ s{^\Q$self->{base}\E}{};
			push @objs, [ $k, $f[2] ];
		}
	}
	elsif (-d "$self->{dir}/$prefix")
	{
		my $dir = $self->{dir};
		find(sub { push @objs, [ substr($File::Find::name, length($dir) + 1), -s $_ ] if -f $_ && !/^\./ },
			"$dir/$prefix");
	}
	return sort { $a->[0] cmp $b->[0] } @objs;
}

# The keys of the objects under prefix, sorted.
sub keys
{
	my ($self, $prefix) = @_;
	return map { $_->[0] } $self->objects($prefix);
}

1;
