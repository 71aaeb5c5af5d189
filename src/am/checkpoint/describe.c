/*-------------------------------------------------------------------------
 *
 * describe.c
 *	  What a checkpoint records of each forst table so that forst.attach can
 *	  create it again (checkpoint/describe.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "utils/guc.h"
#include "utils/json.h"

#include "am/checkpoint/describe.h"

List *
forst_describe_tables(void)
{
	List	   *out = NIL;
	uint64		i;
	int			ret;
	int			nestlevel;

	/*
	 * Names outside pg_catalog come out schema-qualified (types, functions
	 * of expressions, collations, operator classes), so that the
	 * definitions mean the same under the search_path of whoever attaches.
	 */
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	ret = SPI_execute(
					  "SELECT c.oid,"
					  " quote_ident(n.nspname) || '.' || quote_ident(c.relname),"
					  " (SELECT string_agg(CASE WHEN a.attisdropped"
					  "   THEN quote_ident('forst_dropped_' || a.attnum) || ' ' ||"
					  "    (SELECT format_type(t.oid, NULL) FROM pg_type t WHERE t.typlen = a.attlen"
					  "      AND t.typalign = a.attalign AND t.typtype = 'b' AND t.typelem = 0"
					  "      ORDER BY t.oid LIMIT 1)"
					  "   ELSE quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod) ||"
					  "    CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation"
					  "     THEN ' COLLATE ' || quote_ident(co.collname) ELSE '' END ||"
					  "    CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END ||"
					  "    COALESCE(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '') END,"
					  "   ', ' ORDER BY a.attnum)"
					  "  FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid OR a.attisdropped AND t.oid = 'int4'::regtype"
					  "  LEFT JOIN pg_collation co ON co.oid = a.attcollation"
					  "  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum"
					  "  WHERE a.attrelid = c.oid AND a.attnum > 0),"
					  " (SELECT string_agg(CASE WHEN k.contype = 'p' THEN '' ELSE"
					  "   'CONSTRAINT ' || quote_ident(k.conname) || ' ' END ||"
					  "   pg_get_constraintdef(k.oid), ', ' ORDER BY k.contype DESC, k.conname)"
					  "  FROM pg_constraint k WHERE k.conrelid = c.oid AND k.contype IN ('p', 'c')),"
					  " (SELECT string_agg(quote_ident('forst_dropped_' || a.attnum), ',' ORDER BY a.attnum)"
					  "  FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND a.attisdropped),"
					  " c.relpersistence = 'u',"
					  " (SELECT json_agg(json_build_object("
					  "   'entry', x.entry, 'name', x.name, 'unique', x.uniq,"
					  "   'keys', CASE WHEN left(x.def, length(x.head)) = x.head THEN"
					  "    regexp_replace(left(substr(x.def, length(x.head) + 1),"
					  "                        length(x.def) - length(x.head) - coalesce(length(x.pred) + 7, 0)),"
					  "                   ' WITH \\(entry_id=''?[0-9.]+''?\\)$', '') END,"
					  "   'where', x.pred) ORDER BY x.oid)"
					  "  FROM (SELECT ic.oid, ic.relname AS name, i.indisunique AS uniq,"
					  "          coalesce((SELECT o.option_value::numeric::bigint"
					  "                      FROM pg_options_to_table(ic.reloptions) o"
					  "                     WHERE o.option_name = 'entry_id'), ic.oid::bigint) AS entry,"
					  "          pg_get_indexdef(ic.oid) AS def, pg_get_expr(i.indpred, i.indrelid) AS pred,"
					  "          'CREATE ' || CASE WHEN i.indisunique THEN 'UNIQUE ' ELSE '' END ||"
					  "          'INDEX ' || quote_ident(ic.relname) || ' ON ' || quote_ident(n.nspname) ||"
					  "          '.' || quote_ident(c.relname) || ' USING forst_key ' AS head"
					  "          FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid"
					  "         WHERE i.indrelid = c.oid AND NOT i.indisprimary AND i.indisvalid"
					  "           AND i.indisready AND ic.relam = (SELECT oid FROM pg_am WHERE amname = 'forst_key')) x)"
					  " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
					  " JOIN pg_am am ON am.oid = c.relam"
					  " WHERE am.amname = 'forst' AND c.relkind = 'r' AND c.relpersistence IN ('p', 'u')"
					  " ORDER BY c.oid",
					  true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "forst: listing forst tables failed: %d", ret);
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		ForstTableDesc *t = palloc0(sizeof(ForstTableDesc));
		bool		isnull;
		char	   *s;

		t->relid = DatumGetObjectId(SPI_getbinval(tup, desc, 1, &isnull));
		t->name = SPI_getvalue(tup, desc, 2);
		t->columns = SPI_getvalue(tup, desc, 3);
		s = SPI_getvalue(tup, desc, 4);
		t->constraints = s ? s : "";
		s = SPI_getvalue(tup, desc, 5);
		t->dropped = s ? s : "";
		t->unlogged = DatumGetBool(SPI_getbinval(tup, desc, 6, &isnull));
		s = SPI_getvalue(tup, desc, 7);
		t->indexes = s ? s : "[]";
		if (t->columns == NULL)
			t->columns = "";
		out = lappend(out, t);
	}
	AtEOXact_GUC(false, nestlevel);
	return out;
}

static void
append_json_str(StringInfo buf, const char *key, const char *value)
{
	appendStringInfo(buf, "\"%s\":", key);
	escape_json(buf, value);
}

void
forst_describe_append(StringInfo json, const ForstTableDesc *d)
{
	append_json_str(json, "columns", d->columns);
	appendStringInfoChar(json, ',');
	append_json_str(json, "constraints", d->constraints);
	appendStringInfoChar(json, ',');
	append_json_str(json, "dropped", d->dropped);
	appendStringInfo(json, ",\"unlogged\":%s,", d->unlogged ? "true" : "false");
	appendStringInfo(json, "\"indexes\":%s,", d->indexes);
}
