/* Internal: paths of files in a folder. */
#ifndef NMT_PATH_H
#define NMT_PATH_H

/* dir/name in a malloc'ed string (NULL when out of memory). */
char *nmt_path_join(const char *dir, const char *name);

#endif
