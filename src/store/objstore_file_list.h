/*-------------------------------------------------------------------------
 *
 * objstore_file_list.h
 *	  ListObjects for the file:// object store (objstore_file.c): keys are
 *	  paths below the store's root directory.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_OBJSTORE_FILE_LIST_H
#define FST_OBJSTORE_FILE_LIST_H

#include "objstore.h"

#define FILE_ROOT_MAX	2048
#define FILE_PATH_MAX	(FILE_ROOT_MAX + FST_OBJ_KEY_MAX + 128)

/*
 * Up to max_keys keys below root that begin with prefix and sort after
 * start_after (NULL: from the first), in byte order, into out (with the
 * truncated flag and the next start when more follow), as
 * fst_objstore_list promises.
 */
extern FstCode fst_file_list_keys(const char *root, const char *prefix,
								  const char *start_after, int max_keys,
								  FstObjList *out, FstError *err);

#endif							/* FST_OBJSTORE_FILE_LIST_H */
