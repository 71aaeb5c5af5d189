/*-------------------------------------------------------------------------
 *
 * privileges.c
 *	  Privilege checks of forst's SQL functions (base/privileges.h), and
 *	  the entry points of the user-facing expiry functions, which check
 *	  ownership as the caller before the extension's own code runs with
 *	  the extension owner's rights.
 *
 * docs/security.md holds the whole matrix: function, who may call it, and
 * the check that enforces it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "am/base/privileges.h"

PG_FUNCTION_INFO_V1(forst_set_ttl_fn);
PG_FUNCTION_INFO_V1(forst_advance_watermark_fn);

Oid			forst_expiry_checked_relid = InvalidOid;

/* relid's name, for a message; an error if there is no such relation */
static char *
rel_name(Oid relid)
{
	char	   *relname = get_rel_name(relid);

	if (relname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	return relname;
}

void
forst_require_table_owner(Oid relid, const char *funcname)
{
	if (pg_class_ownercheck(relid, GetUserId()))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("must be owner of table %s", rel_name(relid)),
			 errdetail("Only the owner of a table (or a superuser) may call %s on it.",
					   funcname)));
}

static bool
forst_reads_all_stats(void)
{
	return has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
}

bool
forst_may_see_role(Oid roleid)
{
	return OidIsValid(roleid) ?
		(has_privs_of_role(GetUserId(), roleid) || forst_reads_all_stats()) :
		forst_reads_all_stats();
}

void
forst_require_table_read(Oid relid, const char *funcname)
{
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) == ACLCHECK_OK ||
		forst_reads_all_stats())
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for table %s", rel_name(relid)),
			 errdetail("%s needs the SELECT privilege on the table or the privileges of the \"pg_read_all_stats\" role.",
					   funcname)));
}

void
forst_require_superuser(const char *funcname, const char *what)
{
	if (superuser())
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for function %s", funcname),
			 errdetail("Only superusers may %s.", what)));
}

void
forst_require_role(Oid roleid, const char *rolename, const char *funcname,
				   const char *what)
{
	if (has_privs_of_role(GetUserId(), roleid))
		return;					/* superusers have every role's privileges */
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for function %s", funcname),
			 errdetail("Only superusers and roles with the privileges of the \"%s\" role may %s.",
					   rolename, what)));
}

/*
 * Calls the function "name" of forst's schema (the schema of the function
 * being called, fcinfo's) with fcinfo's arguments, argument types argtypes.
 * fmgr runs a SECURITY DEFINER callee with its owner's rights; EXECUTE on
 * it is checked by the executor only, so the callee can be revoked from
 * PUBLIC and still be reached through this entry point, after its check.
 */
static Datum
call_in_schema(FunctionCallInfo fcinfo, const char *name, int nargs,
			   Oid *argtypes)
{
	LOCAL_FCINFO(inner, FUNC_MAX_ARGS);
	FmgrInfo	flinfo;
	Oid			nsp = get_func_namespace(fcinfo->flinfo->fn_oid);
	Oid			fn;
	Datum		result;
	int			i;

	fn = LookupFuncName(list_make2(makeString(get_namespace_name(nsp)),
								   makeString(pstrdup(name))),
						nargs, argtypes, false);
	fmgr_info(fn, &flinfo);
	InitFunctionCallInfoData(*inner, &flinfo, nargs, fcinfo->fncollation,
							 NULL, NULL);
	for (i = 0; i < nargs; i++)
		inner->args[i] = fcinfo->args[i];
	result = FunctionCallInvoke(inner);
	fcinfo->isnull = inner->isnull;
	return result;
}

/* call_in_schema for an expiry entry point that checked relid's owner */
static Datum
call_checked(FunctionCallInfo fcinfo, Oid relid, const char *name, int nargs,
			 Oid *argtypes)
{
	Oid			save = forst_expiry_checked_relid;
	Datum		result;

	forst_expiry_checked_relid = relid;
	PG_TRY();
	{
		result = call_in_schema(fcinfo, name, nargs, argtypes);
	}
	PG_FINALLY();
	{
		forst_expiry_checked_relid = save;
	}
	PG_END_TRY();
	return result;
}

/*
 * forst.set_ttl(tbl, column, ttl) -- for the table's owner: checks that,
 * then runs forst._set_ttl (which writes forst.expiry as its owner).
 */
Datum
forst_set_ttl_fn(PG_FUNCTION_ARGS)
{
	Oid			argtypes[3] = {REGCLASSOID, NAMEOID, INTERVALOID};

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("table must not be NULL")));
	forst_require_table_owner(PG_GETARG_OID(0), "forst.set_ttl");
	return call_checked(fcinfo, PG_GETARG_OID(0), "_set_ttl", 3, argtypes);
}

/* forst.advance_watermark(tbl, value) -- the same for the watermark */
Datum
forst_advance_watermark_fn(PG_FUNCTION_ARGS)
{
	Oid			argtypes[2] = {REGCLASSOID, TIMESTAMPTZOID};

	forst_require_table_owner(PG_GETARG_OID(0), "forst.advance_watermark");
	return call_checked(fcinfo, PG_GETARG_OID(0), "_advance_watermark", 2, argtypes);
}
