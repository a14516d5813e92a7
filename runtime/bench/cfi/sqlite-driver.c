/* Issue 22's database workload: SQLite (libsqlite3-sys's bundled amalgamation), in memory.
 * usage: sqlite-driver SCALE — inserts SCALE * 10,000 rows in a transaction, builds an index,
 * runs indexed range queries, a GROUP BY and an ORDER BY; prints a checksum. */
#include <stdio.h>
#include <stdlib.h>

#include "sqlite3.h"

static sqlite3 *db;

static void die(const char *what) {
    fprintf(stderr, "sqlite-driver: %s: %s\n", what, sqlite3_errmsg(db));
    exit(1);
}

static void exec(const char *sql) {
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        die(sql);
}

static sqlite3_stmt *prepare(const char *sql) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        die(sql);
    return s;
}

int main(int argc, char **argv) {
    int rows = (argc > 1 ? atoi(argv[1]) : 10) * 10000;
    unsigned seed = 12345;
    long long sum = 0;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK)
        die("open");
    exec("CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL)");
    exec("BEGIN");
    sqlite3_stmt *ins = prepare("INSERT INTO t(a, b, c) VALUES (?, ?, ?)");
    for (int i = 0; i < rows; i++) {
        char b[32];
        seed = seed * 1103515245u + 12345u;
        snprintf(b, sizeof b, "name-%u", (seed >> 8) % 50000);
        sqlite3_bind_int(ins, 1, (int)((seed >> 4) % 1000000));
        sqlite3_bind_text(ins, 2, b, -1, SQLITE_TRANSIENT);
        sqlite3_bind_double(ins, 3, i * 0.5);
        if (sqlite3_step(ins) != SQLITE_DONE)
            die("insert");
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    exec("COMMIT");
    exec("CREATE INDEX ta ON t(a)");
    exec("CREATE INDEX tb ON t(b)");
    sqlite3_stmt *range = prepare("SELECT count(*), sum(c) FROM t WHERE a BETWEEN ? AND ?");
    for (int i = 0; i < rows / 10; i++) {
        seed = seed * 1103515245u + 12345u;
        int lo = (int)((seed >> 4) % 1000000);
        sqlite3_bind_int(range, 1, lo);
        sqlite3_bind_int(range, 2, lo + 2000);
        if (sqlite3_step(range) != SQLITE_ROW)
            die("range");
        sum += sqlite3_column_int64(range, 0);
        sqlite3_reset(range);
    }
    sqlite3_finalize(range);
    sqlite3_stmt *group = prepare("SELECT b, count(*), avg(a) FROM t GROUP BY b ORDER BY 2 DESC, 1 LIMIT 10");
    while (sqlite3_step(group) == SQLITE_ROW)
        sum += sqlite3_column_int64(group, 1);
    sqlite3_finalize(group);
    sqlite3_stmt *order = prepare("SELECT id FROM t ORDER BY c * 7 % 13, b LIMIT 5");
    while (sqlite3_step(order) == SQLITE_ROW)
        sum += sqlite3_column_int64(order, 0);
    sqlite3_finalize(order);
    sqlite3_close(db);
    printf("checksum %lld\n", sum);
    return 0;
}
