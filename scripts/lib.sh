# scripts/lib.sh -- shared by scripts/demo.sh and scripts/test.sh.
# Source it (". scripts/lib.sh"); it defines functions and variables only.
#
# Targets a fresh Debian 12 machine.  As root, packages are installed with
# apt-get and the server runs as an unprivileged system user (PostgreSQL
# refuses to run as root).  As any other user, apt-get and "make install"
# go through sudo and the server runs as that user.

FORST_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FORST_TEST_USER=${FORST_TEST_USER:-forst_test}

# Always PostgreSQL 15, even when other versions are installed beside it.
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}

FORST_PACKAGES=(
	build-essential
	clang
	libclang-rt-14-dev		# libFuzzer and sanitizer runtimes (only recommended by clang)
	postgresql-15
	postgresql-server-dev-15
	postgresql-15-partman		# pg_partman managing forst partitions (regress test forst_partman)
	libcurl4-openssl-dev
	libssl-dev
	libpq-dev				# forst reaches the other servers of a distributed table
	liblz4-dev
	libzstd-dev
	libxml2-dev				# PostgreSQL's PGXS flags name its headers
	libipc-run-perl			# TAP tests (PostgreSQL::Test::Cluster)
	rocksdb-tools			# db_bench, for the benchmark comparison
	python3
)

log() { printf '==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Prints a script's leading comment block (its usage).
forst_usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$1"; }

is_root() { [ "$(id -u)" -eq 0 ]; }

as_root()
{
	if is_root; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "needs root: $*"
	fi
}

# Runs a command as the unprivileged user that owns test and demo servers.
as_pg_user()
{
	if is_root; then
		runuser -u "$FORST_TEST_USER" -- "$@"
	else
		"$@"
	fi
}

# The s3 test step's servers and client (scripts/rgw.sh, s3-cli-check.sh).
FORST_S3_PACKAGES=(
	ceph-mon
	ceph-osd
	radosgw
	awscli
	curl
)

# Installs the packages of FORST_PACKAGES (or those named as arguments)
# that are missing (apt-get update once, and only when something is
# missing).
forst_install_deps()
{
	local missing=() p pkgs=("$@")

	[ "${#pkgs[@]}" -gt 0 ] || pkgs=("${FORST_PACKAGES[@]}")
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	if [ "${#missing[@]}" -eq 0 ]; then
		log "packages: all ${#pkgs[@]} present"
		return 0
	fi
	log "packages: installing ${missing[*]}"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
	as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends "${missing[@]}"
	[ -x "$PG_CONFIG" ] || die "$PG_CONFIG missing after installing postgresql-server-dev-15"
}

# Creates the unprivileged system user when running as root.
forst_ensure_pg_user()
{
	is_root || return 0
	id -u "$FORST_TEST_USER" >/dev/null 2>&1 && return 0
	log "creating system user $FORST_TEST_USER"
	useradd --system --user-group --no-create-home --home-dir /nonexistent \
		--shell /usr/sbin/nologin "$FORST_TEST_USER"
}

forst_make()
{
	make -C "$FORST_ROOT" --no-print-directory PG_CONFIG="$PG_CONFIG" "$@"
}

# Builds forst and installs it into a private copy of PostgreSQL 15 under
# DIR (its bin/, lib/ and share/ trees, about 50 MB).  PostgreSQL's
# installation is relocatable: binaries find lib/ and share/ relative to
# themselves, so a server started from DIR loads this build of forst,
# whatever other checkouts on the machine have installed system-wide, and
# no root is needed.  Prints DIR's bindir.
forst_build_private_install()
{
	local dir=$1 libdir sharedir

	libdir=$(dirname "$("$PG_CONFIG" --bindir)")	# /usr/lib/postgresql/15
	sharedir=$("$PG_CONFIG" --sharedir)			# /usr/share/postgresql/15
	forst_make -s -j"$(nproc)" >&2
	mkdir -p "$dir$(dirname "$libdir")" "$dir$(dirname "$sharedir")"
	cp -a "$libdir" "$dir$(dirname "$libdir")/"
	cp -a "$sharedir" "$dir$(dirname "$sharedir")/"
	forst_make -s install DESTDIR="$dir" >&2
	printf '%s\n' "$dir$libdir/bin"
}

# A private server for a benchmark: builds this checkout into
# $work/pg (forst_build_private_install), creates and starts a cluster in
# $work/data on a free port, its socket in $work, forst preloaded on a
# file:// store in $work/store, shared_buffers 256MB, then the lines of
# $2 and of $SETTINGS in postgresql.conf.  Sets work, bindir, data and port,
# defines psql_ (psql -At on database postgres, stopping at the first
# error) and stops the server at exit (and removes $work unless KEEP=1).
# $1 names the temporary directory.
forst_bench_server()
{
	work=$(forst_user_tmpdir "$1")
	log "build: make; install into $work/pg"
	bindir=$(forst_build_private_install "$work/pg")
	data=$work/data
	port=$(forst_free_port)
	trap forst_bench_server_stop EXIT
	as_pg_user "$bindir/initdb" -D "$data" -A trust --no-locale -E UTF8 >/dev/null
	cat >>"$data/postgresql.conf" <<EOF
port = $port
listen_addresses = ''
unix_socket_directories = '$work'
shared_preload_libraries = 'forst'
forst.remote_dir = 'file://$work/store'
shared_buffers = '256MB'
${2:-}
${SETTINGS:-}
EOF
	as_pg_user "$bindir/pg_ctl" -D "$data" -l "$work/server.log" -w start >/dev/null
}

forst_bench_server_stop()
{
	as_pg_user "$bindir/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true
	if [ "${KEEP:-0}" = 1 ]; then log "kept $work"; else rm -rf "$work"; fi
}

psql_()
{
	as_pg_user "$bindir/psql" -X -q -At -h "$work" -p "$port" -d postgres -v ON_ERROR_STOP=1 "$@"
}

# A directory owned by the server user, for servers and test files: the
# repository may live where that user cannot read (such as /root).
forst_user_tmpdir()
{
	local d

	d=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
	if is_root; then
		chown "$FORST_TEST_USER:" "$d"
	fi
	chmod 755 "$d"
	printf '%s\n' "$d"
}

# Prints a TCP port on 127.0.0.1 that nothing listens on.
# A port nothing listens on can still be taken: by a client socket whose
# local (ephemeral) port it is, or one in TIME_WAIT.  So the port must also
# bind (without SO_REUSEADDR), when python3 is there to try.
forst_port_bindable()
{
	command -v python3 >/dev/null 2>&1 || return 0
	python3 -c 'import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)' "$1" 2>/dev/null
}

forst_free_port()
{
	local p

	for p in $(seq 54320 54420); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && forst_port_bindable "$p"; then
			printf '%s\n' "$p"
			return 0
		fi
	done
	die "no free port in 54320-54420"
}
