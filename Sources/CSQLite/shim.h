#ifndef PC_SQLITE_SHIM_H
#define PC_SQLITE_SHIM_H
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>
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
/* The start of the WAL index ("-shm" shared memory) of db's main database, as SQLite itself maps it for db,
   or NULL when there is none (not in WAL mode, or the index is not open yet). Through the VFS's own xShmMap
   with bExtend = 0: no descriptor of the -shm file is opened here (closing one would drop every POSIX lock
   this process holds on the file, SQLite's included). The mapping lives until db is closed. */
static inline const void *pc_sqlite3_wal_index(sqlite3 *db) {
    sqlite3_file *file = NULL;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || file == NULL) return NULL;
    const sqlite3_io_methods *methods = file->pMethods;
    if (methods == NULL || methods->iVersion < 2 || methods->xShmMap == NULL) return NULL;
    volatile void *region = NULL;
    if (methods->xShmMap(file, 0, 32768, 0, &region) != SQLITE_OK) return NULL;
    return (const void *)region;
}
/* The WAL-index header at the start of a WAL database's "-shm" file (https://sqlite.org/walformat.html; the
   file format every SQLite version sharing a database agrees on): two 48-byte copies. A committing writer
   stores the new header in the second copy, then the first, with a memory barrier between; every commit
   changes it (the transaction counter, the last valid frame, the header checksum), and so does a WAL restart
   (new salts). Reading the first copy, then the second, and finding them equal and initialised means one
   committed state was read, as SQLite's own readers decide (walIndexTryHdr). Returns 1 and fills out[0..5]
   then; 0 while a writer is between the two copies or the index is not initialised. */
static inline int pc_sqlite3_wal_index_header(const void *shm, uint64_t out[6]) {
    const volatile uint64_t *words = (const volatile uint64_t *)shm;
    uint64_t second[6];
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (int i = 0; i < 6; i++) out[i] = words[i];
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (int i = 0; i < 6; i++) second[i] = words[6 + i];
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (memcmp(out, second, sizeof second) != 0) return 0;
    return ((const unsigned char *)out)[12] != 0; /* isInit */
}
#endif
