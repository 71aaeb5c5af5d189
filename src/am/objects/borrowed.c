/*-------------------------------------------------------------------------
 *
 * borrowed.c
 *	  Visibility rules of borrowed SST files (see objects/borrowed.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "utils/memutils.h"

#include "lsm/coding.h"
#include "am/objects/borrowed.h"
#include "lsm/ikey.h"

#define VIS_HEADER "forst-table 1"

/* Parses "first-last,..." or "-" into v->ranges (offsets from v->lo). */
static bool
parse_ranges(const char *s, ForstVis *v, MemoryContext cxt)
{
	int			cap = 8;
	uint32		prev_end = 0;
	bool		any = false;

	v->nranges = 0;
	v->ranges = MemoryContextAlloc(cxt, sizeof(uint32) * 2 * cap);
	if (strcmp(s, "-") == 0 || *s == '\0')
		return true;
	while (*s)
	{
		char	   *end;
		unsigned long a,
					b;
		uint32		oa,
					ob;

		errno = 0;
		a = strtoul(s, &end, 10);
		if (errno || end == s || *end != '-' || a > PG_UINT32_MAX)
			return false;
		s = end + 1;
		b = strtoul(s, &end, 10);
		if (errno || end == s || (*end != ',' && *end != '\0') || b > PG_UINT32_MAX)
			return false;
		s = *end == ',' ? end + 1 : end;
		oa = (uint32) a - v->lo;
		ob = (uint32) b - v->lo;
		/* inside [lo, xmax), ordered, not overlapping */
		if (oa > ob || ob >= v->xmax - v->lo || (any && oa <= prev_end))
			return false;
		if (v->nranges == cap)
		{
			cap *= 2;
			v->ranges = repalloc(v->ranges, sizeof(uint32) * 2 * cap);
		}
		v->ranges[2 * v->nranges] = oa;
		v->ranges[2 * v->nranges + 1] = ob;
		v->nranges++;
		prev_end = ob;
		any = true;
	}
	return true;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* Parses "<id>,<id>..." (a visidx line's list) into v->indexes. */
static bool
parse_indexes(const char *s, ForstVis *v, MemoryContext cxt)
{
	int			cap = 4;

	v->nindexes = 0;
	v->indexes = MemoryContextAlloc(cxt, sizeof(uint32) * cap);
	while (*s)
	{
		char	   *end;
		unsigned long id;

		errno = 0;
		id = strtoul(s, &end, 10);
		if (errno || end == s || id == 0 || id > PG_UINT32_MAX ||
			(*end != ',' && *end != '\0'))
			return false;
		if (v->nindexes == cap)
		{
			cap *= 2;
			v->indexes = repalloc(v->indexes, sizeof(uint32) * cap);
		}
		v->indexes[v->nindexes++] = (uint32) id;
		s = *end == ',' ? end + 1 : end;
	}
	qsort(v->indexes, v->nindexes, sizeof(uint32), cmp_u32);
	return v->nindexes > 0;
}

static bool
parse_line(char *line, ForstVis *v, MemoryContext cxt)
{
	unsigned	kg_lo,
				kg_hi;
	unsigned long lo,
				xmax;
	char		ranges[8192];
	int			used = 0;
	char	   *tail;

	if (sscanf(line, "vis %u %u %lu %lu %n", &kg_lo, &kg_hi, &lo, &xmax, &used) != 4 ||
		used == 0 || kg_lo > kg_hi || kg_hi > PG_UINT16_MAX ||
		lo > PG_UINT32_MAX || xmax > PG_UINT32_MAX)
		return false;
	tail = line + used;
	v->nindexes = 0;
	v->indexes = NULL;
	v->kg_lo = (uint16) kg_lo;
	v->kg_hi = (uint16) kg_hi;
	v->lo = (TransactionId) lo;
	v->xmax = (TransactionId) xmax;
	if (strlen(tail) < sizeof(ranges))
	{
		strlcpy(ranges, tail, sizeof(ranges));
		return parse_ranges(ranges, v, cxt);
	}
	return parse_ranges(tail, v, cxt);
}

bool
forst_vis_parse(const char *blob, size_t len, ForstVisList *out,
				MemoryContext cxt)
{
	char	   *text;
	char	   *line;
	char	   *save = NULL;
	int			cap = 4;

	out->n = 0;
	out->items = NULL;
	if (len == 0)
		return true;
	text = MemoryContextAlloc(cxt, len + 1);
	memcpy(text, blob, len);
	text[len] = '\0';
	line = strtok_r(text, "\n", &save);
	if (line == NULL || strcmp(line, VIS_HEADER) != 0)
		return false;
	out->items = MemoryContextAlloc(cxt, sizeof(ForstVis) * cap);
	while ((line = strtok_r(NULL, "\n", &save)) != NULL)
	{
		if (strncmp(line, "visidx ", 7) == 0)
		{
			/* the index entries the rule before it shows */
			if (out->n == 0 || out->items[out->n - 1].nindexes > 0 ||
				!parse_indexes(line + 7, &out->items[out->n - 1], cxt))
				return false;
			continue;
		}
		if (strncmp(line, "vis ", 4) != 0)
			continue;			/* a later version's line */
		if (out->n == cap)
		{
			cap *= 2;
			out->items = repalloc(out->items, sizeof(ForstVis) * cap);
		}
		if (!parse_line(line, &out->items[out->n], cxt))
			return false;
		out->n++;
	}
	pfree(text);
	return true;
}

void
forst_vis_format(StringInfo buf, const ForstVis *v)
{
	int			i;

	appendStringInfo(buf, "vis %u %u %u %u ", v->kg_lo, v->kg_hi, v->lo, v->xmax);
	if (v->nranges == 0)
		appendStringInfoChar(buf, '-');
	for (i = 0; i < v->nranges; i++)
		appendStringInfo(buf, "%s%u-%u", i ? "," : "",
						 v->lo + v->ranges[2 * i], v->lo + v->ranges[2 * i + 1]);
	appendStringInfoChar(buf, '\n');
	if (v->nindexes > 0)
	{
		appendStringInfoString(buf, "visidx ");
		for (i = 0; i < v->nindexes; i++)
			appendStringInfo(buf, "%s%u", i ? "," : "", v->indexes[i]);
		appendStringInfoChar(buf, '\n');
	}
}

void
forst_vis_build(ForstVis *v, uint16 kg_lo, uint16 kg_hi, TransactionId lo,
				TransactionId xmax, const char *ranges, const uint32 *ids, int n)
{
	v->kg_lo = kg_lo;
	v->kg_hi = kg_hi;
	v->lo = lo;
	v->xmax = xmax;
	v->nindexes = 0;
	v->indexes = NULL;
	if (kg_lo > kg_hi || !parse_ranges(ranges, v, CurrentMemoryContext))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: malformed visibility ranges in a checkpoint")));
	if (n > 0)
	{
		v->indexes = palloc(sizeof(uint32) * n);
		memcpy(v->indexes, ids, sizeof(uint32) * n);
		qsort(v->indexes, n, sizeof(uint32), cmp_u32);
		v->nindexes = n;
	}
}

/* Whether v shows the entries of index entry id id. */
static bool
shows_index(const ForstVis *v, uint32 id)
{
	return v->nindexes > 0 &&
		bsearch(&id, v->indexes, v->nindexes, sizeof(uint32), cmp_u32) != NULL;
}

void
forst_vis_keep_indexes(ForstVis *v, const uint32 *ids, int n)
{
	uint32	   *kept = n > 0 ? palloc(sizeof(uint32) * n) : NULL;
	int			k = 0;

	for (int i = 0; i < n; i++)
		if (shows_index(v, ids[i]))
			kept[k++] = ids[i];
	if (k > 1)
		qsort(kept, k, sizeof(uint32), cmp_u32);
	v->indexes = kept;
	v->nindexes = k;
}

/* Whether off (an xid's offset from lo, below xmax - lo) is listed. */
static bool
in_ranges(const ForstVis *v, uint32 off)
{
	int			lo = 0,
				hi = v->nranges - 1;

	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;

		if (off < v->ranges[2 * mid])
			hi = mid - 1;
		else if (off > v->ranges[2 * mid + 1])
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

const char *
forst_vis_owner(const char *owner, const ForstVisList *list, ForstVisSet *set)
{
	const char *p = owner;

	set->n = 0;
	for (;;)
	{
		char	   *end;
		long		r;

		errno = 0;
		r = strtol(p, &end, 10);
		if (errno != 0 || end == p || r < 0 || list == NULL || r >= list->n ||
			set->n == FORST_VIS_MAX_PARTS)
			return NULL;
		set->parts[set->n++] = list->items[r];
		if (*end == ':')
			return end + 1;
		if (*end != '+')
			return NULL;
		p = end + 1;
	}
}

void
forst_vis_set_own(ForstVisSet *set, MemoryContext cxt)
{
	int			i;

	for (i = 0; i < set->n; i++)
	{
		ForstVis   *v = &set->parts[i];
		uint32	   *copy;

		if (v->nindexes > 0)
		{
			copy = MemoryContextAlloc(cxt, sizeof(uint32) * v->nindexes);
			memcpy(copy, v->indexes, sizeof(uint32) * v->nindexes);
			v->indexes = copy;
		}
		if (v->nranges == 0)
			continue;
		copy = MemoryContextAlloc(cxt, sizeof(uint32) * 2 * v->nranges);
		memcpy(copy, v->ranges, sizeof(uint32) * 2 * v->nranges);
		v->ranges = copy;
	}
}

void
forst_vis_set_free(ForstVisSet *set)
{
	int			i;

	for (i = 0; i < set->n; i++)
	{
		if (set->parts[i].nranges > 0)
			pfree(set->parts[i].ranges);
		if (set->parts[i].nindexes > 0)
			pfree(set->parts[i].indexes);
	}
	pfree(set);
}

void
forst_vis_rewrite(void *arg, FstSlice ikey, char *value, size_t len)
{
	const ForstVisSet *set = arg;
	const ForstVis *v = NULL;
	uint8		flags = (uint8) value[0];
	TransactionId xid = fst_get_fixed32(value + 1);
	uint16		kg = fst_get_be16(ikey.data);
	uint32		index_id = 0;
	bool		visible;
	int			i;

	if (kg == FST_KG_INDEX)
	{
		/*
		 * [FST_KG_INDEX][entry id 4B][columns][row][row length 2B]: the
		 * entry belongs to its row's key group
		 */
		FstSlice	up = fst_ikey_user_part(ikey);
		const unsigned char *p = (const unsigned char *) up.data;
		size_t		rowlen;

		if (up.len >= FST_KG_BYTES + 4 + FST_KG_BYTES + 2)
		{
			index_id = ((uint32) p[2] << 24) | ((uint32) p[3] << 16) |
				((uint32) p[4] << 8) | (uint32) p[5];
			rowlen = ((size_t) p[up.len - 2] << 8) | p[up.len - 1];
			if (rowlen < FST_KG_BYTES || FST_KG_BYTES + 4 + rowlen + 2 > up.len)
				index_id = 0;
			else
				kg = fst_get_be16(up.data + up.len - 2 - rowlen);
		}
	}
	for (i = 0; i < set->n; i++)
		if (kg >= set->parts[i].kg_lo && kg <= set->parts[i].kg_hi)
		{
			v = &set->parts[i];
			break;
		}
	if (v != NULL && fst_get_be16(ikey.data) == FST_KG_INDEX &&
		(index_id == 0 || !shows_index(v, index_id)))
		v = NULL;
	if (v == NULL)
		visible = false;
	else if (flags & FST_ENTRY_FROZEN)
		visible = true;
	else if (xid - v->lo < v->xmax - v->lo)
		visible = in_ranges(v, xid - v->lo);
	else
		visible = (flags & FST_ENTRY_COMMITTED) && TransactionIdPrecedes(xid, v->lo);
	if (visible)
		value[0] = (char) (flags | FST_ENTRY_FROZEN | FST_ENTRY_COMMITTED);
	else
	{
		/* an aborted transaction to every reader and to compaction */
		value[0] = (char) (flags & ~(FST_ENTRY_FROZEN | FST_ENTRY_COMMITTED));
		fst_put_fixed32(value + 1, InvalidTransactionId);
	}
}
