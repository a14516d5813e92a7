/* Issue 22's interpreter workload: Lua 5.4 (lua-src's bundled sources) running a script.
 * usage: lua-driver SCRIPT SCALE — the script reads the global SCALE and returns a checksum,
 * printed on stdout so the work cannot be optimised away. */
#include <stdio.h>
#include <stdlib.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s SCRIPT SCALE\n", argv[0]);
        return 2;
    }
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    lua_pushinteger(L, atoi(argv[2]));
    lua_setglobal(L, "SCALE");
    if (luaL_dofile(L, argv[1]) != LUA_OK) {
        fprintf(stderr, "%s: %s\n", argv[0], lua_tostring(L, -1));
        return 1;
    }
    printf("checksum %s\n", lua_tostring(L, -1));
    lua_close(L);
    return 0;
}
