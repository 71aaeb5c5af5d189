#!/usr/bin/env bash
# scripts/s3-cli-check.sh -- interoperability of forst's s3:// store with
# the aws CLI, against a running server (scripts/rgw.sh or
# scripts/s3-server.sh; their environment: S3_ENDPOINT, S3_BUCKET,
# AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY).
#
#   eval "$(scripts/rgw.sh start /tmp/rgw)"; bash scripts/s3-cli-check.sh
#
# The aws CLI uploads a random file that forst must read back intact;
# forst writes objects (empty, 1 byte, 64 KiB, 20 MiB multipart) that the
# CLI must list with the right sizes and download with the same SHA-256.
# Prints "ok - ..." / "not ok - ..." lines and ends with "N passed, N failed".
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${S3_ENDPOINT:?S3_ENDPOINT is not set (start a server first)}"
BUCKET=${S3_BUCKET:-forst-test}
# Debian's CLI first: newer ones may send checksum trailers that older
# servers refuse
AWS=${AWS_CLI:-$(command -v /usr/bin/aws || command -v aws || true)}
[ -n "$AWS" ] || { echo "aws CLI missing (apt-get install awscli)" >&2; exit 1; }

passed=0
failed=0
result()
{
	if [ "$1" -eq 0 ]; then
		echo "ok - $2"
		passed=$((passed + 1))
	else
		echo "not ok - $2"
		failed=$((failed + 1))
	fi
}

work=$(mktemp -d "${TMPDIR:-/tmp}/forst-s3-cli.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix="cli-$$-$(date +%s)"
printf '[default]\nregion = %s\ns3 =\n    addressing_style = path\n' \
	"${AWS_REGION:-us-east-1}" >"$work/aws.config"
export AWS_CONFIG_FILE="$work/aws.config" AWS_SHARED_CREDENTIALS_FILE=/dev/null
export AWS_PAGER="" AWS_REQUEST_CHECKSUM_CALCULATION=when_required \
	AWS_RESPONSE_CHECKSUM_VALIDATION=when_required
aws_s3() { "$AWS" --endpoint-url "$S3_ENDPOINT" s3 "$@"; }

# 1. the CLI writes, forst reads; forst writes
head -c 3000001 /dev/urandom >"$work/from-aws.bin"
aws_s3 cp --only-show-errors "$work/from-aws.bin" "s3://$BUCKET/$prefix/from-aws/blob"
result $? "aws s3 cp uploads a 3 MB file"
make -C "$ROOT" -s --no-print-directory build/unit_tests PG_CONFIG="${PG_CONFIG:-pg_config}" &&
	FORST_S3_TEST_URL="s3://$BUCKET/$prefix?endpoint=$S3_ENDPOINT" \
		FORST_S3_TEST_CLI_DIR="$work" "$ROOT/build/unit_tests" s3it_cli_interop
result $? "forst reads the CLI's object intact and writes its own"

# 2. the CLI lists and reads what forst wrote
aws_s3 ls --recursive "s3://$BUCKET/$prefix/to-aws/" >"$work/ls.out"
result $? "aws s3 ls lists forst's objects"
cat "$work/ls.out"
for f in empty one small.sst big.sst; do
	size=$(stat -c %s "$work/to-aws/$f" 2>/dev/null || echo missing)
	awk -v k="$prefix/to-aws/$f" -v s="$size" \
		'$4 == k && $3 == s { found = 1 } END { exit !found }' "$work/ls.out"
	result $? "aws s3 ls shows $f with its size ($size bytes)"
	rm -f "$work/dl"
	aws_s3 cp --only-show-errors "s3://$BUCKET/$prefix/to-aws/$f" "$work/dl" &&
		[ "$(sha256sum <"$work/dl")" = "$(sha256sum <"$work/to-aws/$f")" ]
	result $? "aws s3 cp downloads $f with the same sha256"
done

aws_s3 rm --only-show-errors --recursive "s3://$BUCKET/$prefix/" >/dev/null 2>&1 || true
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
