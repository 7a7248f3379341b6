/*
 * The routing data's generation (part of Portico's variables module): `portico_data_generation;` (http level) makes a
 * shared memory zone holding one counter, which the configuration API bumps each time it publishes a new version of
 * the routes and backends (nginx-assets/lua/portico/store.lua) and every request's router reads (store.sync, through
 * LuaJIT's FFI). The router used to read the version from the shared dictionary itself: a lookup that hashes the
 * key, takes the dictionary's lock and moves the entry in its LRU list, in shared memory every worker writes
 * (~450 instructions per request, e2e/bench/dataplane-cg.ts); the counter is one read of a cache line that changes
 * only when the data does. The zone survives a reload (same name, size and module), and the counter with it.
 */

#include "ngx_http_portico_vars.h"

/* The counter in this cycle's zone (workers inherit it from the master); NULL without the directive. */
static ngx_atomic_t  *ngx_http_pv_generation;


static ngx_int_t
ngx_http_pv_generation_init_zone(ngx_shm_zone_t *shm_zone, void *data)
{
    ngx_atomic_t     *gen;
    ngx_slab_pool_t  *shpool;

    if (data) {
        /* A reload: the previous cycle's zone, and its counter, are reused. */
        shm_zone->data = data;
        ngx_http_pv_generation = data;
        return NGX_OK;
    }

    shpool = (ngx_slab_pool_t *) shm_zone->shm.addr;

    if (shm_zone->shm.exists) {
        shm_zone->data = shpool->data;
        ngx_http_pv_generation = shpool->data;
        return NGX_OK;
    }

    gen = ngx_slab_alloc(shpool, sizeof(ngx_atomic_t));
    if (gen == NULL) {
        return NGX_ERROR;
    }

    *gen = 0;
    shpool->data = (void *) gen;
    shm_zone->data = (void *) gen;
    ngx_http_pv_generation = gen;

    return NGX_OK;
}


char *
ngx_http_pv_data_generation(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_str_t        name = ngx_string("portico_data_generation");
    ngx_shm_zone_t  *zone;

    zone = ngx_shared_memory_add(cf, &name, 8 * ngx_pagesize, &ngx_http_portico_vars_module);
    if (zone == NULL) {
        return NGX_CONF_ERROR;
    }

    if (zone->data) {
        return "is duplicate";
    }

    zone->init = ngx_http_pv_generation_init_zone;
    zone->data = (void *) 1;   /* marks the zone as claimed by this directive until init replaces it */

    return NGX_CONF_OK;
}


/* The generation, 0 to 2^31-1 (it wraps; only a change matters), or -1 without the zone. */
int
ngx_http_portico_vars_generation(void)
{
    if (ngx_http_pv_generation == NULL) {
        return -1;
    }

    return (int) (*ngx_http_pv_generation & 0x7fffffff);
}


/* A new version of the data is published (after it is stored). */
void
ngx_http_portico_vars_generation_bump(void)
{
    if (ngx_http_pv_generation) {
        (void) ngx_atomic_fetch_add(ngx_http_pv_generation, 1);
    }
}
