/*-------------------------------------------------------------------------
 *
 * sigv4.c
 *	  AWS Signature Version 4: canonical request, string to sign, signing
 *	  key and Authorization header (see sigv4.h for the contract).
 *
 * Reference: "Authenticating Requests: Using the Authorization Header"
 * in the Amazon S3 API reference (sig-v4-header-based-auth); its worked
 * examples are reproduced byte for byte by test/unit/test_sigv4.c.
 *
 *-------------------------------------------------------------------------
 */
#include "fst_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "sigv4.h"

static const char hexdigits[] = "0123456789abcdef";

static void
hex_encode(const uint8 *in, size_t len, char *out)
{
	size_t		i;

	for (i = 0; i < len; i++)
	{
		out[2 * i] = hexdigits[in[i] >> 4];
		out[2 * i + 1] = hexdigits[in[i] & 15];
	}
	out[2 * len] = '\0';
}

static void
digest(const EVP_MD *md, const void *data, size_t len, uint8 *out)
{
	unsigned int outlen = 0;

	/* EVP_Digest fails only on allocation failure inside OpenSSL */
	if (!EVP_Digest(data, len, out, &outlen, md, NULL))
		memset(out, 0, EVP_MD_get_size(md));
}

void
fst_sha256_hex(const void *data, size_t len, char *out)
{
	uint8		md[32];

	digest(EVP_sha256(), data, len, md);
	hex_encode(md, sizeof(md), out);
}

void
fst_md5_hex(const void *data, size_t len, char *out)
{
	uint8		md[16];

	digest(EVP_md5(), data, len, md);
	hex_encode(md, sizeof(md), out);
}

void
fst_md5_base64(const void *data, size_t len, char *out)
{
	uint8		md[16];

	digest(EVP_md5(), data, len, md);
	EVP_EncodeBlock((unsigned char *) out, md, sizeof(md));
}

void
fst_md5_base64_hex(const void *data, size_t len, char *b64, char *hex)
{
	uint8		md[16];

	digest(EVP_md5(), data, len, md);
	EVP_EncodeBlock((unsigned char *) b64, md, sizeof(md));
	hex_encode(md, sizeof(md), hex);
}

FstCode
fst_body_digests(const FstPutSource *src, size_t chunk, char *sha256_hex,
				 char *md5_b64, char *md5_hex, FstError *err)
{
	EVP_MD_CTX *sha = EVP_MD_CTX_new();
	EVP_MD_CTX *md5 = EVP_MD_CTX_new();
	char	   *buf = fst_malloc(chunk);
	uint64		off = 0;
	uint8		sha_md[32];
	uint8		md5_md[16];
	unsigned int outlen;
	FstCode		code = FST_OK;

	if (sha == NULL || md5 == NULL || buf == NULL ||
		!EVP_DigestInit_ex(sha, EVP_sha256(), NULL) ||
		!EVP_DigestInit_ex(md5, EVP_md5(), NULL))
		code = fst_error(err, FST_NO_MEMORY, "out of memory");
	while (code == FST_OK && off < src->len)
	{
		size_t		n = (size_t) Min(src->len - off, (uint64) chunk);

		code = src->read(src->arg, off, buf, n, err);
		if (code == FST_OK &&
			(!EVP_DigestUpdate(sha, buf, n) || !EVP_DigestUpdate(md5, buf, n)))
			code = fst_error(err, FST_NO_MEMORY, "out of memory");
		off += n;
	}
	if (code == FST_OK &&
		(!EVP_DigestFinal_ex(sha, sha_md, &outlen) ||
		 !EVP_DigestFinal_ex(md5, md5_md, &outlen)))
		code = fst_error(err, FST_NO_MEMORY, "out of memory");
	if (code == FST_OK)
	{
		hex_encode(sha_md, sizeof(sha_md), sha256_hex);
		EVP_EncodeBlock((unsigned char *) md5_b64, md5_md, sizeof(md5_md));
		hex_encode(md5_md, sizeof(md5_md), md5_hex);
	}
	EVP_MD_CTX_free(sha);
	EVP_MD_CTX_free(md5);
	fst_free(buf);
	return code;
}

void
fst_sigv4_amz_date(int64 t, char *out)
{
	time_t		tt = (time_t) t;
	struct tm	tm;

	gmtime_r(&tt, &tm);
	strftime(out, FST_AMZ_DATE_LEN + 1, "%Y%m%dT%H%M%SZ", &tm);
}

static void
hmac_sha256(const void *key, size_t keylen, const char *msg, uint8 *out)
{
	unsigned int outlen = 0;

	if (HMAC(EVP_sha256(), key, (int) keylen, (const unsigned char *) msg,
			 strlen(msg), out, &outlen) == NULL)
		memset(out, 0, 32);
}

/* ---- encoding ---------------------------------------------------------- */

void
fst_sigv4_uri_encode(FstBuf *out, const char *s, size_t len, bool keep_slash)
{
	static const char upper[] = "0123456789ABCDEF";
	size_t		i;

	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			(c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
			c == '~' || (c == '/' && keep_slash))
			fst_buf_putc(out, c);
		else
		{
			char		esc[3];

			esc[0] = '%';
			esc[1] = upper[c >> 4];
			esc[2] = upper[c & 15];
			fst_buf_append(out, esc, 3);
		}
	}
}

typedef struct EncodedPair
{
	char	   *name;
	char	   *value;
} EncodedPair;

static int
cmp_pairs(const void *a, const void *b)
{
	const EncodedPair *pa = a;
	const EncodedPair *pb = b;
	int			r = strcmp(pa->name, pb->name);

	return r != 0 ? r : strcmp(pa->value, pb->value);
}

static char *
encode_dup(const char *s, bool keep_slash)
{
	FstBuf		b;

	fst_buf_init(&b);
	fst_sigv4_uri_encode(&b, s, strlen(s), keep_slash);
	fst_buf_putc(&b, '\0');
	if (b.oom)
	{
		fst_buf_free(&b);
		return NULL;
	}
	return b.data;
}

bool
fst_sigv4_query(const FstSigV4Pair *params, int nparams, FstBuf *out)
{
	EncodedPair *enc;
	bool		ok = true;
	int			i;

	fst_buf_reset(out);
	enc = fst_calloc(Max(nparams, 1), sizeof(EncodedPair));
	if (enc == NULL)
		return false;
	for (i = 0; i < nparams && ok; i++)
	{
		enc[i].name = encode_dup(params[i].name, false);
		enc[i].value = encode_dup(params[i].value ? params[i].value : "",
								  false);
		ok = enc[i].name != NULL && enc[i].value != NULL;
	}
	if (ok)
	{
		qsort(enc, nparams, sizeof(EncodedPair), cmp_pairs);
		for (i = 0; i < nparams; i++)
		{
			if (i > 0)
				fst_buf_putc(out, '&');
			fst_buf_append(out, enc[i].name, strlen(enc[i].name));
			fst_buf_putc(out, '=');
			fst_buf_append(out, enc[i].value, strlen(enc[i].value));
		}
	}
	fst_buf_putc(out, '\0');
	if (out->len > 0)
		out->len--;				/* keep the NUL out of the length */
	for (i = 0; i < nparams; i++)
	{
		fst_free(enc[i].name);
		fst_free(enc[i].value);
	}
	fst_free(enc);
	return ok && !out->oom;
}

/* ---- canonical request ------------------------------------------------- */

/* Lower-cased name and trimmed, space-collapsed value of a header. */
static bool
canonical_header(const FstSigV4Pair *h, EncodedPair *out)
{
	size_t		n = strlen(h->name);
	const char *v = h->value ? h->value : "";
	char	   *d;
	size_t		i;
	bool		space = false;

	out->name = fst_malloc(n + 1);
	out->value = fst_malloc(strlen(v) + 1);
	if (out->name == NULL || out->value == NULL)
		return false;
	for (i = 0; i < n; i++)
	{
		char		c = h->name[i];

		out->name[i] = (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
	}
	out->name[n] = '\0';
	while (*v == ' ' || *v == '\t')
		v++;
	d = out->value;
	for (; *v; v++)
	{
		if (*v == ' ' || *v == '\t')
			space = true;
		else
		{
			if (space && d != out->value)
				*d++ = ' ';
			space = false;
			*d++ = *v;
		}
	}
	*d = '\0';
	return true;
}

static int
cmp_header_names(const void *a, const void *b)
{
	return strcmp(((const EncodedPair *) a)->name,
				  ((const EncodedPair *) b)->name);
}

FstCode
fst_sigv4_canonical_request(const FstSigV4Request *req, FstBuf *creq,
							FstBuf *signed_headers, FstError *err)
{
	EncodedPair *hs;
	FstBuf		cr;
	FstBuf		sh;
	bool		ok = true;
	int			i;

	hs = fst_calloc(Max(req->nheaders, 1), sizeof(EncodedPair));
	if (hs == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	for (i = 0; i < req->nheaders && ok; i++)
		ok = canonical_header(&req->headers[i], &hs[i]);
	fst_buf_init(&cr);
	fst_buf_init(&sh);
	if (ok)
	{
		/* a stable order for equal names: they are joined with ',' */
		qsort(hs, req->nheaders, sizeof(EncodedPair), cmp_header_names);

		fst_buf_append(&cr, req->method, strlen(req->method));
		fst_buf_putc(&cr, '\n');
		fst_buf_append(&cr, req->path, strlen(req->path));
		fst_buf_putc(&cr, '\n');
		fst_buf_append(&cr, req->query, strlen(req->query));
		fst_buf_putc(&cr, '\n');
		for (i = 0; i < req->nheaders; i++)
		{
			bool		same = i > 0 && strcmp(hs[i].name, hs[i - 1].name) == 0;

			if (same)
			{
				/* replace the previous line's '\n' with ',' */
				cr.data[cr.len - 1] = ',';
			}
			else
			{
				fst_buf_append(&cr, hs[i].name, strlen(hs[i].name));
				fst_buf_putc(&cr, ':');
				if (sh.len > 0)
					fst_buf_putc(&sh, ';');
				fst_buf_append(&sh, hs[i].name, strlen(hs[i].name));
			}
			fst_buf_append(&cr, hs[i].value, strlen(hs[i].value));
			fst_buf_putc(&cr, '\n');
		}
		fst_buf_putc(&cr, '\n');
		fst_buf_append(&cr, sh.data, sh.len);
		fst_buf_putc(&cr, '\n');
		fst_buf_append(&cr, req->payload_hash, strlen(req->payload_hash));
		fst_buf_putc(&cr, '\0');
		fst_buf_putc(&sh, '\0');
		ok = !cr.oom && !sh.oom;
	}
	for (i = 0; i < req->nheaders; i++)
	{
		fst_free(hs[i].name);
		fst_free(hs[i].value);
	}
	fst_free(hs);
	if (!ok)
	{
		fst_buf_free(&cr);
		fst_buf_free(&sh);
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	}
	cr.len--;
	sh.len--;
	if (creq)
	{
		fst_buf_free(creq);
		*creq = cr;
	}
	else
		fst_buf_free(&cr);
	if (signed_headers)
	{
		fst_buf_free(signed_headers);
		*signed_headers = sh;
	}
	else
		fst_buf_free(&sh);
	return FST_OK;
}

/* ---- signing ----------------------------------------------------------- */

FstCode
fst_sigv4_string_to_sign(const char *amz_date, const char *region,
						 const char *service, const char *creq, FstBuf *out,
						 FstError *err)
{
	char		hash[FST_SHA256_HEX_LEN + 1];
	char		line[256];
	int			n;

	if (strlen(amz_date) != FST_AMZ_DATE_LEN)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "malformed x-amz-date \"%s\"", amz_date);
	fst_sha256_hex(creq, strlen(creq), hash);
	n = snprintf(line, sizeof(line), "AWS4-HMAC-SHA256\n%s\n%.8s/%s/%s/aws4_request\n%s",
				 amz_date, amz_date, region, service, hash);
	if (n < 0 || (size_t) n >= sizeof(line))
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "region or service name too long");
	fst_buf_reset(out);
	fst_buf_append(out, line, n + 1);
	if (out->oom)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	out->len--;
	return FST_OK;
}

void
fst_sigv4_signing_key(const char *secret_key, const char *date8,
					  const char *region, const char *service, uint8 *key32)
{
	char		date[9];
	size_t		slen = strlen(secret_key);
	char	   *k = fst_malloc(slen + 5);
	uint8		kdate[32];
	uint8		kregion[32];
	uint8		kservice[32];

	memcpy(date, date8, 8);
	date[8] = '\0';
	if (k == NULL)
	{
		memset(key32, 0, 32);
		return;
	}
	memcpy(k, "AWS4", 4);
	memcpy(k + 4, secret_key, slen + 1);
	hmac_sha256(k, slen + 4, date, kdate);
	hmac_sha256(kdate, 32, region, kregion);
	hmac_sha256(kregion, 32, service, kservice);
	hmac_sha256(kservice, 32, "aws4_request", key32);
	/* don't leave the secret behind in freed memory */
	memset(k, 0, slen + 4);
	fst_free(k);
	memset(kdate, 0, sizeof(kdate));
	memset(kregion, 0, sizeof(kregion));
	memset(kservice, 0, sizeof(kservice));
}

FstCode
fst_sigv4_authorization(const FstSigV4Request *req, const FstSigV4Key *key,
						const char *amz_date, FstBuf *out, char *signature,
						FstError *err)
{
	FstBuf		creq;
	FstBuf		sh;
	FstBuf		sts;
	uint8		skey[32];
	uint8		sig[32];
	char		sighex[FST_SHA256_HEX_LEN + 1];
	FstCode		code;
	int			n;

	fst_buf_init(&creq);
	fst_buf_init(&sh);
	fst_buf_init(&sts);
	code = fst_sigv4_canonical_request(req, &creq, &sh, err);
	if (code == FST_OK)
		code = fst_sigv4_string_to_sign(amz_date, key->region, key->service,
										creq.data, &sts, err);
	if (code == FST_OK)
	{
		fst_sigv4_signing_key(key->secret_key, amz_date, key->region,
							  key->service, skey);
		hmac_sha256(skey, sizeof(skey), sts.data, sig);
		memset(skey, 0, sizeof(skey));
		hex_encode(sig, sizeof(sig), sighex);
		if (signature)
			memcpy(signature, sighex, sizeof(sighex));

		fst_buf_reset(out);
		n = snprintf(NULL, 0,
					 "AWS4-HMAC-SHA256 Credential=%s/%.8s/%s/%s/aws4_request,SignedHeaders=%s,Signature=%s",
					 key->access_key, amz_date, key->region, key->service,
					 sh.data, sighex);
		if (fst_buf_reserve(out, n + 1))
		{
			snprintf(out->data, n + 1,
					 "AWS4-HMAC-SHA256 Credential=%s/%.8s/%s/%s/aws4_request,SignedHeaders=%s,Signature=%s",
					 key->access_key, amz_date, key->region, key->service,
					 sh.data, sighex);
			out->len = n;
		}
		else
			code = fst_error(err, FST_NO_MEMORY, "out of memory");
	}
	fst_buf_free(&creq);
	fst_buf_free(&sh);
	fst_buf_free(&sts);
	return code;
}
