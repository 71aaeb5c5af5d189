/*-------------------------------------------------------------------------
 *
 * s3_xml.c
 *	  Parsing S3's XML replies with libxml2: errors, ListObjectsV2,
 *	  DeleteObjects, and the multipart upload calls.
 *
 * Documents are parsed without network access, without entity
 * substitution and without libxml2 printing anything; elements are matched
 * by local name, whatever their namespace (S3 uses
 * http://s3.amazonaws.com/doc/2006-03-01/, some compatibles none).
 * Anything malformed or unexpected is FST_CORRUPT: the store answered
 * something it should not have.
 *
 *-------------------------------------------------------------------------
 */
#include "fst_common.h"

#include <errno.h>
#include <stdlib.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "s3_internal.h"

static xmlDocPtr
parse(const char *body, size_t len, const char *what, FstError *err)
{
	xmlDocPtr	doc;

	if (body == NULL || len == 0)
	{
		fst_error(err, FST_CORRUPT, "empty XML reply to %s", what);
		return NULL;
	}
	if (len > (size_t) INT_MAX)
	{
		fst_error(err, FST_CORRUPT, "XML reply to %s is too large", what);
		return NULL;
	}
	doc = xmlReadMemory(body, (int) len, "s3.xml", NULL,
						XML_PARSE_NONET | XML_PARSE_NOERROR |
						XML_PARSE_NOWARNING | XML_PARSE_NOCDATA);
	if (doc == NULL || xmlDocGetRootElement(doc) == NULL)
	{
		if (doc)
			xmlFreeDoc(doc);
		fst_error(err, FST_CORRUPT, "malformed XML in the reply to %s", what);
		return NULL;
	}
	return doc;
}

static bool
is(xmlNodePtr n, const char *name)
{
	return n != NULL && n->type == XML_ELEMENT_NODE &&
		strcmp((const char *) n->name, name) == 0;
}

/* First child element named name, or NULL. */
static xmlNodePtr
child(xmlNodePtr parent, const char *name)
{
	xmlNodePtr	n;

	for (n = parent ? parent->children : NULL; n; n = n->next)
	{
		if (is(n, name))
			return n;
	}
	return NULL;
}

/*
 * The text of element n (malloc'ed, "" for an empty element), or NULL
 * when out of memory; *oom says which.
 */
static char *
text_of(xmlNodePtr n, bool *oom)
{
	xmlChar    *t = xmlNodeGetContent(n);
	char	   *s;

	s = fst_strdup(t ? (const char *) t : "");
	if (t)
		xmlFree(t);
	if (s == NULL)
		*oom = true;
	return s;
}

/* Copy the text of parent's child name into dst (truncated), "" if none. */
static void
copy_child_text(xmlNodePtr parent, const char *name, char *dst, size_t dstsize)
{
	xmlNodePtr	n = child(parent, name);
	xmlChar    *t = n ? xmlNodeGetContent(n) : NULL;

	snprintf(dst, dstsize, "%s", t ? (const char *) t : "");
	if (t)
		xmlFree(t);
}

void
s3_xml_escape(FstBuf *out, const char *s)
{
	for (; *s; s++)
	{
		switch (*s)
		{
			case '&':
				fst_buf_append(out, "&amp;", 5);
				break;
			case '<':
				fst_buf_append(out, "&lt;", 4);
				break;
			case '>':
				fst_buf_append(out, "&gt;", 4);
				break;
			case '"':
				fst_buf_append(out, "&quot;", 6);
				break;
			case '\'':
				fst_buf_append(out, "&apos;", 6);
				break;
			default:
				fst_buf_putc(out, (uint8) *s);
				break;
		}
	}
}

/* ---- errors ------------------------------------------------------------ */

FstCode
s3_xml_error(const char *body, size_t len, char *code, size_t codesz,
			 char *message, size_t msgsz, FstError *err)
{
	xmlDocPtr	doc = parse(body, len, "a failed request", err);
	xmlNodePtr	root;
	FstCode		rc = FST_OK;

	code[0] = '\0';
	message[0] = '\0';
	if (doc == NULL)
		return FST_CORRUPT;
	root = xmlDocGetRootElement(doc);
	if (!is(root, "Error"))
		rc = fst_error(err, FST_CORRUPT,
					   "error reply has root element <%s>, expected <Error>",
					   (const char *) root->name);
	else
	{
		copy_child_text(root, "Code", code, codesz);
		copy_child_text(root, "Message", message, msgsz);
		if (code[0] == '\0')
			rc = fst_error(err, FST_CORRUPT, "<Error> reply without <Code>");
	}
	xmlFreeDoc(doc);
	return rc;
}

/* ---- ListObjectsV2 ----------------------------------------------------- */

void
s3_list_page_free(S3ListPage *page)
{
	int			i;

	for (i = 0; i < page->nentries; i++)
		fst_free(page->entries[i].key);
	fst_free(page->entries);
	fst_free(page->next_token);
	memset(page, 0, sizeof(*page));
}

static bool
parse_uint64(const char *s, uint64 *out)
{
	char	   *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return false;
	*out = (uint64) v;
	return true;
}

FstCode
s3_xml_list(const char *body, size_t len, S3ListPage *page, FstError *err)
{
	xmlDocPtr	doc;
	xmlNodePtr	root;
	xmlNodePtr	n;
	int			count = 0;
	bool		oom = false;
	FstCode		rc = FST_OK;
	char		flag[16];

	memset(page, 0, sizeof(*page));
	doc = parse(body, len, "ListObjectsV2", err);
	if (doc == NULL)
		return FST_CORRUPT;
	root = xmlDocGetRootElement(doc);
	if (!is(root, "ListBucketResult"))
	{
		rc = fst_error(err, FST_CORRUPT,
					   "ListObjectsV2 reply has root element <%s>, expected <ListBucketResult>",
					   (const char *) root->name);
		goto done;
	}
	for (n = root->children; n; n = n->next)
		count += is(n, "Contents");
	page->entries = fst_calloc(Max(count, 1), sizeof(FstObjEntry));
	if (page->entries == NULL)
	{
		oom = true;
		goto done;
	}
	for (n = root->children; n && !oom; n = n->next)
	{
		xmlNodePtr	k;
		xmlNodePtr	sz;
		char	   *size_text;
		FstObjEntry *e;

		if (!is(n, "Contents"))
			continue;
		k = child(n, "Key");
		sz = child(n, "Size");
		if (k == NULL || sz == NULL)
		{
			rc = fst_error(err, FST_CORRUPT,
						   "ListObjectsV2 reply has <Contents> without <Key> or <Size>");
			goto done;
		}
		e = &page->entries[page->nentries];
		e->key = text_of(k, &oom);
		if (e->key == NULL)
			break;
		page->nentries++;
		size_text = text_of(sz, &oom);
		if (size_text == NULL)
			break;
		if (e->key[0] == '\0' || !parse_uint64(size_text, &e->size))
			rc = fst_error(err, FST_CORRUPT,
						   "ListObjectsV2 reply has an empty <Key> or a bad <Size> \"%.40s\"",
						   size_text);
		fst_free(size_text);
		if (rc != FST_OK)
			goto done;
	}
	if (oom)
		goto done;
	copy_child_text(root, "IsTruncated", flag, sizeof(flag));
	if (strcmp(flag, "true") == 0)
		page->truncated = true;
	else if (strcmp(flag, "false") != 0 && flag[0] != '\0')
	{
		rc = fst_error(err, FST_CORRUPT,
					   "ListObjectsV2 reply has <IsTruncated>%.15s</IsTruncated>",
					   flag);
		goto done;
	}
	n = child(root, "NextContinuationToken");
	if (n)
		page->next_token = text_of(n, &oom);
	if (page->truncated && !oom &&
		(page->next_token == NULL || page->next_token[0] == '\0') &&
		page->nentries == 0)
		rc = fst_error(err, FST_CORRUPT,
					   "truncated ListObjectsV2 reply without keys or continuation token");

done:
	xmlFreeDoc(doc);
	if (oom)
		rc = fst_error(err, FST_NO_MEMORY, "out of memory");
	if (rc != FST_OK)
		s3_list_page_free(page);
	return rc;
}

/* ---- DeleteObjects ----------------------------------------------------- */

void
s3_delete_errors_free(S3DeleteError *errors, int nerrors)
{
	int			i;

	for (i = 0; i < nerrors; i++)
		fst_free(errors[i].key);
	fst_free(errors);
}

FstCode
s3_xml_delete_result(const char *body, size_t len, S3DeleteError **errors,
					 int *nerrors, FstError *err)
{
	xmlDocPtr	doc;
	xmlNodePtr	root;
	xmlNodePtr	n;
	S3DeleteError *errs = NULL;
	int			count = 0;
	int			nerr = 0;
	bool		oom = false;
	FstCode		rc = FST_OK;

	*errors = NULL;
	*nerrors = 0;
	doc = parse(body, len, "DeleteObjects", err);
	if (doc == NULL)
		return FST_CORRUPT;
	root = xmlDocGetRootElement(doc);
	if (!is(root, "DeleteResult"))
	{
		rc = fst_error(err, FST_CORRUPT,
					   "DeleteObjects reply has root element <%s>, expected <DeleteResult>",
					   (const char *) root->name);
		goto done;
	}
	for (n = root->children; n; n = n->next)
		count += is(n, "Error");
	errs = fst_calloc(Max(count, 1), sizeof(S3DeleteError));
	if (errs == NULL)
	{
		oom = true;
		goto done;
	}
	for (n = root->children; n && !oom; n = n->next)
	{
		xmlNodePtr	k;

		if (!is(n, "Error"))
			continue;
		k = child(n, "Key");
		if (k == NULL)
		{
			rc = fst_error(err, FST_CORRUPT,
						   "DeleteObjects reply has an <Error> without <Key>");
			goto done;
		}
		errs[nerr].key = text_of(k, &oom);
		if (errs[nerr].key == NULL)
			break;
		copy_child_text(n, "Code", errs[nerr].code, sizeof(errs[nerr].code));
		copy_child_text(n, "Message", errs[nerr].message,
						sizeof(errs[nerr].message));
		nerr++;
	}

done:
	xmlFreeDoc(doc);
	if (oom)
		rc = fst_error(err, FST_NO_MEMORY, "out of memory");
	if (rc != FST_OK)
		s3_delete_errors_free(errs, nerr);
	else
	{
		*errors = errs;
		*nerrors = nerr;
	}
	return rc;
}

/* ---- multipart --------------------------------------------------------- */

FstCode
s3_xml_upload_id(const char *body, size_t len, char **upload_id,
				 FstError *err)
{
	xmlDocPtr	doc;
	xmlNodePtr	root;
	xmlNodePtr	n;
	bool		oom = false;
	FstCode		rc = FST_OK;

	*upload_id = NULL;
	doc = parse(body, len, "CreateMultipartUpload", err);
	if (doc == NULL)
		return FST_CORRUPT;
	root = xmlDocGetRootElement(doc);
	n = child(root, "UploadId");
	if (!is(root, "InitiateMultipartUploadResult") || n == NULL)
		rc = fst_error(err, FST_CORRUPT,
					   "CreateMultipartUpload reply has no <InitiateMultipartUploadResult><UploadId>");
	else
	{
		*upload_id = text_of(n, &oom);
		if (oom)
			rc = fst_error(err, FST_NO_MEMORY, "out of memory");
		else if ((*upload_id)[0] == '\0')
		{
			fst_free(*upload_id);
			*upload_id = NULL;
			rc = fst_error(err, FST_CORRUPT,
						   "CreateMultipartUpload reply has an empty <UploadId>");
		}
	}
	xmlFreeDoc(doc);
	return rc;
}

FstCode
s3_xml_complete(const char *body, size_t len, char *code, size_t codesz,
				char *message, size_t msgsz, FstError *err)
{
	xmlDocPtr	doc;
	xmlNodePtr	root;
	FstCode		rc = FST_OK;

	code[0] = '\0';
	message[0] = '\0';
	doc = parse(body, len, "CompleteMultipartUpload", err);
	if (doc == NULL)
		return FST_CORRUPT;
	root = xmlDocGetRootElement(doc);
	if (is(root, "Error"))
	{
		copy_child_text(root, "Code", code, codesz);
		copy_child_text(root, "Message", message, msgsz);
		if (code[0] == '\0')
			snprintf(code, codesz, "%s", "UnknownError");
	}
	else if (!is(root, "CompleteMultipartUploadResult"))
		rc = fst_error(err, FST_CORRUPT,
					   "CompleteMultipartUpload reply has root element <%s>",
					   (const char *) root->name);
	xmlFreeDoc(doc);
	return rc;
}
