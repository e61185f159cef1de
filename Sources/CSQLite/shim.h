#ifndef PC_SQLITE_SHIM_H
#define PC_SQLITE_SHIM_H
#include <sqlite3.h>
/* sqlite3_bind_text/blob take a destructor; SQLITE_TRANSIENT is a macro cast Swift cannot import. */
static inline int pc_sqlite3_bind_text_transient(sqlite3_stmt *stmt, int index, const char *text, int length) {
    return sqlite3_bind_text(stmt, index, text, length, SQLITE_TRANSIENT);
}
static inline int pc_sqlite3_bind_blob_transient(sqlite3_stmt *stmt, int index, const void *bytes, int length) {
    return sqlite3_bind_blob(stmt, index, bytes, length, SQLITE_TRANSIENT);
}
/* sqlite3_config is variadic, which Swift cannot call. Turns off the allocation statistics: with them on
   (Debian's default), every sqlite3_malloc and sqlite3_free takes one process-wide mutex, which the
   reader connections of two event loops then contend for on every lookup. Only valid before
   sqlite3_initialize (the first open); returns SQLITE_MISUSE after it. */
static inline int pc_sqlite3_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
