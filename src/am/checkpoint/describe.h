/*-------------------------------------------------------------------------
 *
 * describe.h
 *	  What a checkpoint records of each forst table so that forst.attach can
 *	  create it again (checkpoint/describe.c).
 *
 * Column definitions (dropped columns as placeholders of the same length
 * and alignment, so that stored rows keep their layout), DEFAULTs, NOT
 * NULL, CHECK and PRIMARY KEY constraints, UNLOGGED; and its valid
 * secondary indexes with the entry ids their entries carry
 * (keys/index_entry.h), their names, and their definitions as CREATE INDEX
 * ... USING forst_key takes them: the key columns (with INCLUDE, NULLS NOT
 * DISTINCT) and the predicate.  Written under search_path pg_catalog, so
 * that every name outside it is schema-qualified and means the same under
 * the search_path of whoever attaches.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_DESCRIBE_H
#define FORST_DESCRIBE_H

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"

typedef struct ForstTableDesc
{
	Oid			relid;
	char	   *name;			/* schema-qualified, quoted */
	char	   *columns;		/* column definitions */
	char	   *constraints;	/* table constraints, comma separated */
	char	   *dropped;		/* names of placeholder columns to drop */
	char	   *indexes;		/* secondary indexes, a JSON array */
	bool		unlogged;		/* checkpoint-durable (UNLOGGED) */
} ForstTableDesc;

/*
 * The forst tables of this database, as ForstTableDesc *, in
 * CurrentMemoryContext, in OID order.  The caller is connected to SPI.
 */
extern List *forst_describe_tables(void);

/*
 * Appends the description's fields to a checkpoint's JSON object of the
 * table: "columns", "constraints", "dropped", "unlogged" and "indexes",
 * each followed by a comma.
 */
extern void forst_describe_append(StringInfo json, const ForstTableDesc *d);

#endif							/* FORST_DESCRIBE_H */
